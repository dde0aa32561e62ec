package meshmessage

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh/frame"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Subscription modes and types of the reference.
const (
	// ModeBroadcasting is the subscription mode whose events a client gets
	// as BROADCAST_MESSAGE_TO_CLIENT; other modes get
	// ASYNC_MESSAGE_TO_CLIENT.
	ModeBroadcasting = "BROADCASTING"
	// TypeSync is the subscription type of a responder: the client serves
	// the RSB method its topic names and gets its calls as
	// REQUEST_TO_CLIENT.
	TypeSync = "SYNC"
)

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
	// Type is SYNC, for a responder, or ASYNC.
	Type string `json:"type,omitempty"`
}

// parseSubscription decodes a Subscription body.
func parseSubscription(body []byte) (*Subscription, error) {
	var sub Subscription
	if err := json.Unmarshal(body, &sub); err != nil {
		return nil, fmt.Errorf("%w: subscription: %w", ErrBadMessage, err)
	}
	return &sub, nil
}

// subscribe opens a listener, or for a SYNC item an RSB server, per new
// topic of the body. The token's grant must allow subscribing to each
// topic, and for a SYNC item publishing the answers on it too.
func (c *conn) subscribe(body []byte) error {
	sub, err := parseSubscription(body)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs == nil {
		return ErrClosed // end has closed the listeners; open none after it
	}
	for _, it := range sub.Topics {
		if err := c.subscribeItem(it); err != nil {
			return err
		}
	}
	return nil
}

// subscribeItem opens the subscription of one item; c.mu is held.
func (c *conn) subscribeItem(it SubscriptionItem) error {
	sc, err := scope.Parse(it.Topic)
	if err != nil {
		return fmt.Errorf("%w: topic: %w", ErrBadMessage, err)
	}
	gr := c.grant.Load()
	sync := strings.EqualFold(it.Type, TypeSync)
	if !gr.MaySubscribe(sc) || sync && !gr.MayPublish(sc) {
		return fmt.Errorf("%w: %s", ErrForbidden, sc)
	}
	if sync {
		if _, ok := c.servers[it.Topic]; ok {
			return nil
		}
		srv, err := c.serveMethod(sc)
		if err != nil {
			return err
		}
		c.servers[it.Topic] = srv
		return nil
	}
	if _, ok := c.subs[it.Topic]; ok {
		return nil
	}
	cmd := AsyncMessageToClient
	if it.Mode == ModeBroadcasting {
		cmd = BroadcastMessageToClient
	}
	public := func(ev *notification.Event) bool { return sc.IsReserved() || !ev.Scope.IsReserved() }
	l, err := c.s.bus.NewListener(sc, client.WithFilter(public))
	if err != nil {
		return fmt.Errorf("%w: %w", errBus, err)
	}
	l.AddHandler(func(ev *client.Event) error {
		c.deliver(ev, cmd)
		return nil
	})
	c.subs[it.Topic] = l
	c.s.st.AddSubscribers(1)
	return nil
}

// unsubscribe closes the listeners and servers of the body's topics.
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
			c.s.st.AddSubscribers(-1)
		}
		if srv, ok := c.servers[it.Topic]; ok {
			_ = srv.Close()
			delete(c.servers, it.Topic)
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
		c.s.st.AddDropped(DropUnmappable, 1)
		return
	}
	if c.send(p) {
		c.s.st.AddDelivered(1)
	} else {
		c.s.st.AddDropped(DropQueueFull, 1)
	}
}
