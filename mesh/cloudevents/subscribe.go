package cloudevents

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/mesh/frame"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// keepAlive is how often an idle SSE stream gets a comment line, so that
// proxies keep the connection and the server learns a client has gone.
const keepAlive = 15 * time.Second

// outgoing is an event ready for a subscriber: its CloudEvents id and its
// structured JSON.
type outgoing struct {
	id   string
	json []byte
}

// subscription is one client's listener and its bounded queue.
type subscription struct {
	l *client.Listener
	q chan outgoing
}

// subscribe opens a subscription to sc and its sub-scopes. Introspection
// events (under /__rsb/) reach only a subscription within that scope.
func (g *Gateway) subscribe(sc scope.Scope) (*subscription, error) {
	s := &subscription{q: make(chan outgoing, g.cfg.QueueLen)}
	public := func(ev *notification.Event) bool { return sc.IsReserved() || !ev.Scope.IsReserved() }
	l, err := g.bus.NewListener(sc, client.WithFilter(public))
	if err != nil {
		return nil, err
	}
	l.AddHandler(func(ev *client.Event) error {
		ce, err := cloudevent.FromRSB(&ev.Event)
		if err != nil {
			g.st.unmappable.Add(1)
			return nil
		}
		if expired, err := frame.EventExpired(ce, time.Now()); expired || err != nil {
			g.st.expired.Add(1)
			return nil
		}
		b, err := cloudevent.Marshal(ce)
		if err != nil {
			g.st.unmappable.Add(1)
			return nil
		}
		select {
		case s.q <- outgoing{ce.ID, b}:
		default:
			g.st.dropped.Add(1)
		}
		return nil
	})
	s.l = l
	g.subs.Add(1)
	g.st.subscribers.Add(1)
	return s, nil
}

// close ends the subscription.
func (g *Gateway) closeSubscription(s *subscription) {
	_ = s.l.Close()
	g.st.subscribers.Add(-1)
	g.subs.Done()
}

// serveSSE streams the events on sc as Server-Sent Events until the
// client goes, a write times out or the gateway closes.
func (g *Gateway) serveSSE(w http.ResponseWriter, r *http.Request, sc scope.Scope) {
	rc := http.NewResponseController(w)
	s, err := g.subscribe(sc)
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
			buf = appendSSE(buf, o)
			g.st.delivered.Add(1)
		}
	}
}

// appendSSE appends o as one SSE event: its id, and its JSON on data
// lines (one per line of the JSON, which only data embedded as JSON can
// break).
func appendSSE(b []byte, o outgoing) []byte {
	b = append(b, "id: "...)
	b = append(b, o.id...)
	b = append(b, '\n')
	for line := range bytes.Lines(o.json) {
		b = append(b, "data: "...)
		b = append(b, bytes.TrimRight(line, "\r\n")...)
		b = append(b, '\n')
	}
	return append(b, '\n')
}
