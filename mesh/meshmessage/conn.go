package meshmessage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh/frame"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// ModeBroadcasting is the subscription mode whose events a client gets as
// BROADCAST_MESSAGE_TO_CLIENT; other modes get ASYNC_MESSAGE_TO_CLIENT.
const ModeBroadcasting = "BROADCASTING"

// Subscription is the body of SUBSCRIBE_REQUEST and UNSUBSCRIBE_REQUEST.
type Subscription struct {
	// Topics are the subscribed topics, each an RSB scope.
	Topics []SubscriptionItem `json:"topicList"`
}

// SubscriptionItem is one topic of a Subscription.
type SubscriptionItem struct {
	// Topic names the scope; its sub-scopes are included.
	Topic string `json:"topic"`
	// Mode is CLUSTERING or BROADCASTING.
	Mode string `json:"mode,omitempty"`
	// Type is SYNC or ASYNC.
	Type string `json:"type,omitempty"`
}

// conn is one client: a reader goroutine handling its Packages and a
// writer goroutine draining its bounded queue.
type conn struct {
	s  *Server
	nc net.Conn
	// out is the send queue; done closes when the connection ends.
	out  chan *Package
	done chan struct{}
	once sync.Once
	// listening is set by LISTEN_REQUEST: events flow only after it.
	listening atomic.Bool
	mu        sync.Mutex
	subs      map[string]*client.Listener
}

// newConn returns the state of a new connection.
func newConn(s *Server, nc net.Conn) *conn {
	return &conn{s: s, nc: nc, out: make(chan *Package, s.cfg.QueueLen),
		done: make(chan struct{}), subs: make(map[string]*client.Listener)}
}

// end closes the connection and its subscriptions, once.
func (c *conn) end() {
	c.once.Do(func() {
		close(c.done)
		_ = c.nc.Close()
		c.mu.Lock()
		for k, l := range c.subs {
			_ = l.Close()
			delete(c.subs, k)
		}
		c.mu.Unlock()
		c.s.drop(c)
	})
}

// goodbye sends SERVER_GOODBYE_REQUEST ahead of anything queued and ends
// the connection.
func (c *conn) goodbye() {
	c.writeNow(&Package{Header: Header{Command: ServerGoodbyeRequest}})
	c.end()
}

// writeNow writes p at once, ahead of the queue, for the last Package of
// a connection. A net.Conn writes each call whole, so it never splits a
// Package the writer goroutine is writing.
func (c *conn) writeNow(p *Package) {
	if b, err := Marshal(p); err == nil {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
		_, _ = c.nc.Write(b)
	}
}

// send queues p; false if the queue is full or the connection ended.
func (c *conn) send(p *Package) bool {
	select {
	case <-c.done:
		return false
	default:
	}
	select {
	case c.out <- p:
		return true
	default:
		return false
	}
}

// reply queues a response to req.
func (c *conn) reply(req *Package, cmd Command, err error) {
	h := Header{Command: cmd, Seq: req.Header.Seq}
	if err != nil {
		h.Code, h.Desc = 1, err.Error()
	}
	c.send(&Package{Header: h})
}

// writeLoop writes the queued Packages until the connection ends.
func (c *conn) writeLoop() {
	defer c.s.wg.Done()
	defer c.end()
	for {
		select {
		case <-c.done:
			return
		case p := <-c.out:
			b, err := Marshal(p)
			if err != nil {
				c.s.st.unmappable.Add(1)
				continue
			}
			_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
			if _, err := c.nc.Write(b); err != nil {
				return
			}
		}
	}
}

// readLoop handles the client's Packages until it leaves, falls silent
// past the heartbeat timeout or sends one that does not decode.
func (c *conn) readLoop() {
	defer c.s.wg.Done()
	defer c.end()
	for {
		_ = c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.HeartbeatTimeout))
		p, err := Read(c.nc)
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			c.s.st.timedOut.Add(1)
			c.s.log.Info("meshmessage: client silent past the heartbeat timeout", "remote", c.nc.RemoteAddr())
			return
		case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
			return
		default:
			select {
			case <-c.done:
			default:
				c.s.st.badPackages.Add(1)
				c.s.log.Info("meshmessage: closing a client", "remote", c.nc.RemoteAddr(), "err", err)
			}
			return
		}
		if !c.handle(p) {
			return
		}
	}
}

// handle acts on one Package; false ends the reading.
func (c *conn) handle(p *Package) bool {
	switch p.Header.Command {
	case HelloRequest:
		c.reply(p, HelloResponse, nil)
	case HeartbeatRequest:
		c.reply(p, HeartbeatResponse, nil)
	case SubscribeRequest:
		c.reply(p, SubscribeResponse, c.subscribe(p.Body))
	case UnsubscribeRequest:
		c.reply(p, UnsubscribeResponse, c.unsubscribe(p.Body))
	case ListenRequest:
		c.listening.Store(true)
		c.reply(p, ListenResponse, nil)
	case AsyncMessageToServer, BroadcastMessageToServer:
		err := c.s.publish(context.Background(), p)
		if err != nil {
			c.s.st.rejected.Add(1)
		} else {
			c.s.st.published.Add(1)
		}
		ack := AsyncMessageToServerAck
		if p.Header.Command == BroadcastMessageToServer {
			ack = BroadcastMessageToServerAck
		}
		c.reply(p, ack, err)
	case ClientGoodbyeRequest:
		c.writeNow(&Package{Header: Header{Command: ClientGoodbyeResponse, Seq: p.Header.Seq}})
		return false
	case AsyncMessageToClientAck, BroadcastMessageToClientAck, ServerGoodbyeResponse, HeartbeatResponse:
		// Acknowledgements need no answer.
	default:
		c.s.log.Debug("meshmessage: command not served", "cmd", p.Header.Command)
	}
	return true
}

// parseSubscription decodes a Subscription body.
func parseSubscription(body []byte) (*Subscription, error) {
	var sub Subscription
	if err := json.Unmarshal(body, &sub); err != nil {
		return nil, fmt.Errorf("%w: subscription: %w", ErrBadMessage, err)
	}
	return &sub, nil
}

// subscribe opens a listener per new topic of the body.
func (c *conn) subscribe(body []byte) error {
	sub, err := parseSubscription(body)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return ErrClosed // end has closed the listeners; open none after it
	default:
	}
	for _, it := range sub.Topics {
		if _, ok := c.subs[it.Topic]; ok {
			continue
		}
		sc, err := scope.Parse(it.Topic)
		if err != nil {
			return err
		}
		cmd := AsyncMessageToClient
		if it.Mode == ModeBroadcasting {
			cmd = BroadcastMessageToClient
		}
		public := func(ev *notification.Event) bool { return sc.IsReserved() || !ev.Scope.IsReserved() }
		l, err := c.s.bus.NewListener(sc, client.WithFilter(public))
		if err != nil {
			return err
		}
		l.AddHandler(func(ev *client.Event) error {
			c.deliver(ev, cmd)
			return nil
		})
		c.subs[it.Topic] = l
	}
	return nil
}

// unsubscribe closes the listeners of the body's topics.
func (c *conn) unsubscribe(body []byte) error {
	sub, err := parseSubscription(body)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, it := range sub.Topics {
		if l, ok := c.subs[it.Topic]; ok {
			_ = l.Close()
			delete(c.subs, it.Topic)
		}
	}
	return nil
}

// deliver queues an event for the client once it listens.
func (c *conn) deliver(ev *client.Event, cmd Command) {
	if !c.listening.Load() {
		return
	}
	f, err := frame.FromRSB(&ev.Event)
	var p *Package
	if err == nil {
		p, err = FramePackage(f, cmd, "")
	}
	if err != nil {
		c.s.st.unmappable.Add(1)
		return
	}
	if c.send(p) {
		c.s.st.delivered.Add(1)
	} else {
		c.s.st.dropped.Add(1)
	}
}
