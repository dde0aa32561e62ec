package grpcbus

import (
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/proto/grpcbuspb"
	"github.com/rsbd/rsbd/scope"
)

// call is a request waiting for its reply. Its peer fields are under the
// ClientConn's mu.
type call struct {
	reply chan *client.Event // buffered for the one reply
	acked chan struct{}      // closed when a server acknowledges the request
	lost  chan struct{}      // closed when that server falls silent

	peer    string    // the acknowledging server's endpoint
	ackedAt time.Time // when the acknowledgement came
	isLost  bool
}

func newCall() *call {
	return &call{reply: make(chan *client.Event, 1), acked: make(chan struct{}), lost: make(chan struct{})}
}

// onAck takes a server's acknowledgement of call id: the call now watches
// the server's endpoint. The first acknowledgement counts; an
// acknowledgement of a call already answered is ignored, as it races the
// reply; a malformed one is counted and dropped. It runs on the delivering
// goroutine.
func (c *ClientConn) onAck(id string, ev *client.Event) {
	from, _ := userInfo(ev.MetaData.UserInfos, keyEndpoint)
	if sc, err := scope.Parse(from); err != nil || !c.ep.prefix.Contains(sc) {
		c.met.drop(dropMalformed)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.pending[id]
	if cl == nil || cl.peer != "" {
		return
	}
	cl.peer, cl.ackedAt = from, time.Now()
	close(cl.acked)
}

// watchCalls returns the server endpoints of the unary calls that have
// waited a ping interval since their acknowledgement, which need pinging,
// and fails the calls whose server has answered nothing (acknowledgement
// or ping) for the ping timeout. A call answered within a ping interval is
// never pinged for. It runs on the endpoint's goroutine.
func (c *ClientConn) watchCalls(now time.Time) map[string]bool {
	peers := make(map[string]bool)
	c.mu.Lock()
	for _, cl := range c.pending {
		if cl.peer == "" || cl.isLost || now.Sub(cl.ackedAt) < c.o.cfg.PingInterval {
			continue
		}
		peers[cl.peer] = true
		heard := cl.ackedAt
		if h, ok := c.heardAt[cl.peer]; ok && h.After(heard) {
			heard = h
		}
		if now.Sub(heard) > c.o.cfg.PingTimeout {
			cl.isLost = true
			close(cl.lost)
			c.met.missedBeat()
		}
	}
	c.mu.Unlock()
	for p := range c.heardAt {
		if !peers[p] {
			delete(c.heardAt, p)
		}
	}
	return peers
}

// tick pings, every PingInterval, each server endpoint the connection has
// streams or long unary calls with; a server that did not answer the
// previous ping counts as a missed heartbeat. It runs on the endpoint's
// goroutine.
func (c *ClientConn) tick(now time.Time) {
	peers := c.watchCalls(now)
	if now.Sub(c.lastPing) < c.o.cfg.PingInterval {
		return
	}
	c.lastPing = now
	for _, s := range c.ep.snapshot() {
		if p := s.peerAddr.Load(); p != nil {
			peers[*p] = true
		}
	}
	for p := range c.awaiting {
		if !peers[p] {
			delete(c.awaiting, p)
		}
	}
	for p := range peers {
		if c.awaiting[p] {
			c.met.missedBeat()
		}
		c.awaiting[p] = true
		c.ep.ping(p, c.pingSeq.Add(1), false)
	}
}

// onPing takes a server's answer: its streams and unary calls are alive.
func (c *ClientConn) onPing(from string, p *grpcbuspb.Ping) {
	if !p.Ack {
		c.ep.ping(from, p.Data, true)
		return
	}
	// heardAt keeps only endpoints this connection pinged, so it is as
	// bounded as the calls and streams that need them.
	if c.awaiting[from] {
		c.heardAt[from] = time.Now()
	}
	delete(c.awaiting, from)
	c.ep.heard(from)
}
