package rsbsocket

import (
	"log/slog"
	"time"

	"github.com/rsbd/rsbd/scope"
)

// forward queues a frame that connection from published to every other
// connection whose interest matches sc. It runs on from's reader and,
// unlike Deliver, may wait: a target whose queue is at its high watermark
// makes it wait for room, so that a subscriber that reads slower than the
// publisher writes slows the publisher down (its frames wait in its socket)
// instead of losing events. The wait is bounded: targets with room get the
// frame first, then the full targets are waited for together until one
// StallTimeout after the first wait began. A target still without room then
// is marked stalled and the frame is handled by the SlowClientPolicy;
// frames for a stalled target are not waited for until it has drained to
// its low watermark. The wait ends early when the server closes or the
// target goes away.
func (s *Server) forward(from *conn, body []byte, sc scope.Scope) {
	if from.fw == nil {
		from.fw = new(forwarding)
	}
	fw := from.fw
	full := fw.full[:0]
	for _, c := range fw.route(s.index.Load(), sc) {
		if c == from {
			continue
		}
		if res, _ := c.q.offer(body); res == pushWait {
			full = append(full, c)
		} else if c.settle(res) {
			from.flushing.add(c, len(body))
		}
	}
	if len(full) > 0 {
		// Frames without an owner are written first: a full target
		// drains only once its writer runs.
		from.flushTargets()
		for _, c := range full {
			// Each target gets the whole timeout: one that stalls must
			// not use up the wait of the next.
			if from.waitRoom(c, body, time.Now().Add(s.cfg.StallTimeout)) {
				from.flushing.add(c, len(body))
			}
		}
		clear(full)
	}
	if fw.full = reuse(full); fw.gen == 0 && cap(fw.targets) == 0 && cap(fw.full) == 0 {
		from.fw = nil // a one-off frame (a Hello): a listening connection keeps nothing
	}
}

// forwarding is what the reader of a connection whose client publishes
// keeps from frame to frame for forward; a connection that only listens
// has none.
type forwarding struct {
	targets []*conn // the matching connections of the last frame
	full    []*conn // those of them without room
	// targets are those of scope in index gen (0: none), for the next
	// frame on the same scope.
	gen   uint64
	scope []byte
}

// route returns the connections whose interest in ix matches sc: the
// targets of the frame before when it had the same scope and the index
// has not changed since (a publisher's stream on one scope looks its
// targets up once), else looked up and remembered for the next frame. A
// wide fan-out, a long scope or an introspection event (a participant's
// one-off Hello or Bye) is not remembered: an idle connection keeps no
// memory of it.
func (fw *forwarding) route(ix *routeIndex, sc scope.Scope) []*conn {
	s := sc.String()
	if ix.gen == fw.gen && string(fw.scope) == s {
		return fw.targets
	}
	targets := ix.appendTargets(fw.targets[:0], sc)
	if cap(targets) > keepTargetsCap || len(s) > routeScopeMax || IntrospectionScope.Contains(sc) {
		fw.targets, fw.gen = nil, 0
		return targets
	}
	fw.targets, fw.gen = targets, ix.gen
	fw.scope = append(fw.scope[:0], s...)
	return targets
}

// reuse returns list emptied for reuse, or nil when a wide fan-out grew it
// past keepTargetsCap: an idle connection keeps no memory of a broadcast.
func reuse(list []*conn) []*conn {
	if cap(list) > keepTargetsCap {
		return nil
	}
	return list[:0]
}

// waitRoom queues body to dst, waiting for room in dst's queue until
// deadline. It runs on the reader of c and reports whether body was queued.
func (c *conn) waitRoom(dst *conn, body []byte, deadline time.Time) bool {
	s := c.srv
	s.stats.waits.Add(1)
	for {
		res, room := dst.q.offer(body)
		if res != pushWait {
			return dst.settle(res)
		}
		if !c.sleep(room, deadline) {
			break
		}
	}
	select {
	case <-s.done:
		return dst.settle(pushClosed)
	default:
	}
	res, newly := dst.q.stall(body)
	if newly {
		s.stats.stalls.Add(1)
		dst.logAt(slog.LevelDebug, "client stalled", "stall_timeout", s.cfg.StallTimeout)
	}
	return dst.settle(res)
}

// sleep waits until room is closed (it returns true), deadline passes or
// the server closes (false). It runs on the reader of c, which owns the
// timer.
func (c *conn) sleep(room <-chan struct{}, deadline time.Time) bool {
	d := time.Until(deadline)
	if d <= 0 {
		return false
	}
	if c.timer == nil {
		c.timer = time.NewTimer(d)
	} else {
		c.timer.Reset(d)
	}
	select {
	case <-room:
		c.timer.Stop()
		return true
	case <-c.timer.C:
		return false
	case <-c.srv.done:
		c.timer.Stop()
		return false
	}
}
