package cloudevents

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/cloudevent/filter"
	"github.com/rsbd/rsbd/mesh/frame"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// keepAlive is how often an idle SSE stream gets a comment line, so that
// proxies keep the connection and the server learns a client has gone.
const keepAlive = 15 * time.Second

// outgoing is an event ready for a subscriber: its CloudEvents id and its
// structured JSON, or with format=raw its payload alone (text reports
// whether that is valid UTF-8).
type outgoing struct {
	id   string
	json []byte
	text bool
}

// errTooManySubscribers: the gateway serves MaxSubscribers already.
var errTooManySubscribers = errors.New("cloudevents: too many subscribers")

// subscription is one client's listener and its queue, bounded in events
// and in bytes.
type subscription struct {
	l *client.Listener
	q chan outgoing
	// bytes is what the queued events weigh.
	bytes atomic.Int64
}

// take returns o's weight to the queue's byte bound once o left the queue.
func (s *subscription) take(o outgoing) outgoing {
	s.bytes.Add(-int64(len(o.json)))
	return o
}

// offer queues o unless the queue is full in events or bytes.
func (s *subscription) offer(o outgoing, maxBytes int64) bool {
	n := int64(len(o.json))
	if total := s.bytes.Add(n); total > maxBytes && total != n {
		s.bytes.Add(-n)
		return false
	}
	select {
	case s.q <- o:
		return true
	default:
		s.bytes.Add(-n)
		return false
	}
}

// subscribe opens a subscription to sc and its sub-scopes for the events
// that pass flt, queued in format f. Introspection events (under /__rsb/)
// reach only a subscription within that scope.
func (g *Gateway) subscribe(sc scope.Scope, flt filter.Filter, f format) (*subscription, error) {
	if g.st.subscribers.Add(1) > int64(g.cfg.MaxSubscribers) {
		g.st.subscribers.Add(-1)
		return nil, fmt.Errorf("%w: %d", errTooManySubscribers, g.cfg.MaxSubscribers)
	}
	s := &subscription{q: make(chan outgoing, g.cfg.QueueLen)}
	public := func(ev *notification.Event) bool { return sc.IsReserved() || !ev.Scope.IsReserved() }
	l, err := g.bus.NewListener(sc, client.WithFilter(public))
	if err != nil {
		g.st.subscribers.Add(-1)
		return nil, err
	}
	l.AddHandler(func(ev *client.Event) error {
		ce, err := cloudevent.FromRSB(&ev.Event)
		if err != nil {
			g.st.m.AddDropped(dropUnmappable, 1)
			return nil
		}
		if expired, err := frame.EventExpired(ce, time.Now()); expired || err != nil {
			g.st.m.AddDropped(dropExpired, 1)
			return nil
		}
		if !flt.Match(ce) {
			return nil
		}
		o, err := f.outgoing(ce)
		if err != nil {
			g.st.m.AddDropped(dropUnmappable, 1)
			return nil
		}
		if !s.offer(o, g.cfg.QueueBytes) {
			g.st.m.AddDropped(dropQueueFull, 1)
		}
		return nil
	})
	s.l = l
	g.subs.Add(1)
	g.st.m.AddSubscribers(1)
	return s, nil
}

// close ends the subscription.
func (g *Gateway) closeSubscription(s *subscription) {
	_ = s.l.Close()
	g.st.m.AddSubscribers(-1)
	g.st.subscribers.Add(-1)
	g.subs.Done()
}

// serveSSE streams the events on sc as Server-Sent Events until the
// client goes, a write times out or the gateway closes.
func (g *Gateway) serveSSE(w http.ResponseWriter, r *http.Request, sc scope.Scope) {
	rc := http.NewResponseController(w)
	flt, f, ok := g.subscriptionParams(w, r)
	if !ok {
		return
	}
	s, err := g.subscribe(sc, flt, f)
	if err != nil {
		g.refuse(w, err)
		return
	}
	defer g.closeSubscription(s)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	buf := fmt.Appendf(nil, ": subscribed to %s\n\n", sc)
	for {
		if len(buf) > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(g.cfg.WriteTimeout))
			if _, err := w.Write(buf); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			buf = buf[:0]
		}
		select {
		case <-r.Context().Done():
			return
		case <-g.ctx.Done():
			return
		case <-tick.C:
			buf = append(buf, ":\n\n"...)
		case o := <-s.q:
			buf = f.appendSSE(buf, s.take(o))
			g.st.m.AddDelivered(1)
		}
	}
}

// appendSSE appends o as one SSE event: its id, and its JSON on data
// lines. Only data embedded as JSON can hold line breaks (as white space);
// SSE ends a line at CR, LF or CRLF, so the JSON is cut at each, and the
// client, joining the data lines with LF, reads the same JSON value.
func appendSSE(b []byte, o outgoing) []byte {
	b = append(b, "id: "...)
	b = append(b, o.id...)
	b = append(b, '\n')
	return appendSSEData(b, o.json)
}

// appendSSEData appends data on data lines, cut at each line break, and
// the blank line that ends the SSE event.
func appendSSEData(b, data []byte) []byte {
	rest := data
	for {
		i := bytes.IndexAny(rest, "\r\n")
		if i < 0 {
			break
		}
		b = append(b, "data: "...)
		b = append(b, rest[:i]...)
		b = append(b, '\n')
		if rest[i] == '\r' && i+1 < len(rest) && rest[i+1] == '\n' {
			i++
		}
		rest = rest[i+1:]
	}
	b = append(b, "data: "...)
	b = append(b, rest...)
	return append(b, '\n', '\n')
}
