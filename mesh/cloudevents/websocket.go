package cloudevents

import (
	"context"
	"errors"
	"net/http"

	"github.com/coder/websocket"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/scope"
)

// serveWebSocket serves a WebSocket of the CloudEvents WebSocket binding
// (JSON): the events on sc go out as text messages, and text messages that
// come in are published.
func (g *Gateway) serveWebSocket(w http.ResponseWriter, r *http.Request, sc scope.Scope) {
	flt, f, ok := g.subscriptionParams(w, r)
	if !ok {
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:   []string{Subprotocol},
		OriginPatterns: g.cfg.OriginPatterns,
	})
	if err != nil {
		g.reject(reasonMalformed)
		return // Accept replied
	}
	defer c.CloseNow()
	if c.Subprotocol() != Subprotocol {
		g.reject(reasonSubprotocol)
		_ = c.Close(websocket.StatusPolicyViolation, "subprotocol "+Subprotocol+" required")
		return
	}
	c.SetReadLimit(maxWSMessage)
	s, err := g.subscribe(sc, flt, f)
	if err != nil {
		_, why := classify(err)
		g.reject(why)
		_ = c.Close(websocket.StatusTryAgainLater, err.Error())
		return
	}
	defer g.closeSubscription(s)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go g.readWebSocket(ctx, cancel, c, sc)
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.ctx.Done():
			_ = c.Close(websocket.StatusGoingAway, "gateway closing")
			return
		case o := <-s.q:
			o = s.take(o)
			wctx, wcancel := context.WithTimeout(ctx, g.cfg.WriteTimeout)
			typ := websocket.MessageText
			if f == formatRaw && !o.text {
				typ = websocket.MessageBinary
			}
			err := c.Write(wctx, typ, o.json)
			wcancel()
			if err != nil {
				return
			}
			g.st.m.AddDelivered(1)
		}
	}
}

// readWebSocket publishes the structured events the client sends, until
// the connection fails or closes; then it cancels the connection's
// context. A message that is not a valid event is refused and counted:
// the binding has no way to answer it.
func (g *Gateway) readWebSocket(ctx context.Context, cancel context.CancelFunc, c *websocket.Conn, sc scope.Scope) {
	defer cancel()
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) && ctx.Err() == nil {
				g.log.Debug("cloudevents: websocket read", "err", err)
			}
			return
		}
		if typ != websocket.MessageText {
			g.reject(reasonMalformed)
			continue
		}
		e, err := cloudevent.Unmarshal(msg)
		if err == nil {
			_, err = g.publishEvents(ctx, []*cloudevent.Event{e}, sc)
		}
		if err != nil {
			_, why := classify(err)
			g.reject(why)
			g.log.Debug("cloudevents: websocket message refused", "err", err)
		}
	}
}
