package client

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// partInfo describes a participant for introspection.
type partInfo struct {
	kind   string
	id     [16]byte
	parent [16]byte
	scope  scope.Scope
	// always announces a participant under /__rsb/ too
	// (WithReservedAnnouncement).
	always bool
}

// Informer publishes events on its scope or any sub-scope. Each event gets
// the id (informer's participant UUID, sequence number); sequence numbers
// start at 0 and grow by one per event. An Informer is safe for concurrent
// use.
type Informer struct {
	bus  *Bus
	info partInfo
	conv notification.Converter // explicit converter, or nil
	// types remembers the converter of the last payload type.
	types  lastConverter[reflect.Type]
	seq    atomic.Uint32
	closed atomic.Bool

	untrack   func()
	closeOnce sync.Once
}

// NewInformer creates an informer on sc. WithWireSchema picks the converter
// by wire schema; otherwise each payload's Go type picks it.
func (b *Bus) NewInformer(sc scope.Scope, opts ...Option) (*Informer, error) {
	i, err := b.newInformer(sc, KindInformer, collect(opts))
	if err != nil {
		return nil, err
	}
	if err := b.announce(context.Background(), i.info); err != nil {
		i.Close()
		return nil, err
	}
	return i, nil
}

// newInformer creates an informer without announcing it (servers and
// introspection use their own informers).
func (b *Bus) newInformer(sc scope.Scope, kind string, o options) (*Informer, error) {
	if sc.IsZero() {
		return nil, fmt.Errorf("%w: zero scope", ErrConfig)
	}
	i := &Informer{bus: b, info: partInfo{kind: kind, id: notification.NewParticipantID(), scope: sc}}
	if o.wireSchema != "" {
		c, err := b.reg.ForSchema(o.wireSchema)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		i.conv = c
	}
	untrack, err := b.track(func() { i.close(false) })
	if err != nil {
		return nil, err
	}
	i.untrack = untrack
	return i, nil
}

// ID returns the informer's participant id, the sender id of its events.
func (i *Informer) ID() [16]byte { return i.info.id }

// Scope returns the informer's scope.
func (i *Informer) Scope() scope.Scope { return i.info.scope }

// Publish publishes v on the informer's scope and returns the event's id.
// A nil v publishes a void event. Over the socket protocol it returns once
// the event is queued for the connection (see the package documentation);
// ctx bounds the wait for room in that queue. Publish keeps none of v's
// memory: a []byte payload may be reused once it returns.
func (i *Informer) Publish(ctx context.Context, v any) (notification.EventID, error) {
	ev := &Event{Payload: v}
	if err := i.PublishEvent(ctx, ev); err != nil {
		return notification.EventID{}, err
	}
	return ev.ID, nil
}

// PublishEvent publishes ev. A zero ev.Scope means the informer's scope;
// otherwise it must be the informer's scope or a sub-scope (ErrScope).
// ev.Payload is converted (nil and no Data means void); when Payload is nil
// and Data is set, Data is sent as it is under ev.WireSchema. Method, Causes,
// user times and user infos are sent as given; PublishEvent keeps none of
// ev's memory. It fills in ev's Scope, ID, WireSchema, Data (the caller's
// own) and create/send times (a create time already set is kept).
func (i *Informer) PublishEvent(ctx context.Context, ev *Event) error {
	ne, err := i.prepare(ev)
	if err != nil {
		return err
	}
	return i.transmit(ctx, ev, ne)
}

// prepare checks ev, converts its payload, assigns the next event id,
// builds the wire event and stamps its create and send times. The wire
// event shares ev's slices (Data, Causes, user times and infos): the link
// copies them only when it keeps the event past the publish (see
// link.publish), so a publish that is only encoded copies nothing.
func (i *Informer) prepare(ev *Event) (*notification.Event, error) {
	if i.closed.Load() {
		return nil, ErrClosed
	}
	sc := ev.Scope
	if sc.IsZero() {
		sc = i.info.scope
	} else if !i.info.scope.Contains(sc) {
		return nil, fmt.Errorf("%w: %s is not within %s", ErrScope, sc, i.info.scope)
	}
	schema, data, err := i.serialize(ev)
	if err != nil {
		return nil, err
	}
	ne := takeWire()
	*ne = notification.Event{
		Scope:      sc,
		Method:     ev.Method,
		WireSchema: schema,
		Data:       data,
		ID:         notification.EventID{SenderID: i.info.id, SequenceNumber: i.seq.Add(1) - 1},
		Causes:     ev.Causes,
		Present:    notification.HasWireSchema | notification.HasData | notification.HasMetaData,
	}
	// One reading of the clock is the create time (unless ev has one) and
	// the send time: transmit follows right away.
	now := nowMicros()
	ne.MetaData.CreateTime, ne.MetaData.SendTime = ev.MetaData.CreateTime, now
	if ne.MetaData.CreateTime == 0 {
		ne.MetaData.CreateTime = now
	}
	ne.MetaData.UserTimes = ev.MetaData.UserTimes
	ne.MetaData.UserInfos = ev.MetaData.UserInfos
	return ne, nil
}

// serialize converts ev's payload: by the explicit converter, by Go type, or
// not at all for raw Data.
func (i *Informer) serialize(ev *Event) (string, []byte, error) {
	if ev.Payload == nil && ev.Data != nil {
		if ev.WireSchema == "" {
			return "", nil, fmt.Errorf("%w: raw data without a wire schema", ErrConfig)
		}
		return ev.WireSchema, ev.Data, nil // the link copies what it keeps
	}
	if i.conv != nil {
		data, err := i.conv.Serialize(ev.Payload)
		if err != nil {
			return "", nil, fmt.Errorf("client: publish on %s: %w", i.info.scope, err)
		}
		return i.conv.WireSchema(), data, nil
	}
	c, err := converterFor(&i.types, i.bus.reg, ev.Payload)
	if err == nil {
		var data []byte
		if data, err = c.Serialize(ev.Payload); err == nil {
			return c.WireSchema(), data, nil
		}
	}
	return "", nil, fmt.Errorf("client: publish on %s: %w", i.info.scope, err)
}

// transmit publishes ne, stamped by prepare, and reports the result in ev;
// a wire event the link did not keep goes back to the pool.
func (i *Informer) transmit(ctx context.Context, ev *Event, ne *notification.Event) error {
	data := ne.Data // the link may replace ne.Data by a copy it keeps
	kept, err := i.bus.publish(ctx, ne)
	if err == nil {
		ev.Scope, ev.ID, ev.WireSchema, ev.Data = ne.Scope, ne.ID, ne.WireSchema, data
		ev.MetaData.CreateTime, ev.MetaData.SendTime = ne.MetaData.CreateTime, ne.MetaData.SendTime
	}
	if !kept {
		*ne = notification.Event{} // the pool keeps no payload alive
		wirePool.Put(ne)
	}
	return err
}

// wirePool holds wire events that publishes made and no link kept: over
// the socket protocol, with no local listener, an event is encoded for
// the connection at once.
var wirePool = sync.Pool{New: func() any { return new(notification.Event) }}

// takeWire returns a wire event from the pool; the caller overwrites it
// whole.
func takeWire() *notification.Event { return wirePool.Get().(*notification.Event) }

// Close retires the informer (introspection Bye); later publishes fail with
// ErrClosed. It is idempotent.
func (i *Informer) Close() error {
	i.close(true)
	return nil
}

func (i *Informer) close(untrack bool) {
	i.closeOnce.Do(func() {
		i.closed.Store(true)
		if untrack {
			i.untrack()
		}
		i.bus.retire(i.info)
	})
}

// newUntrackedInformer creates an internal informer that Bus.Close does not
// close on its own (introspection closes it after the participants' Byes).
func (b *Bus) newUntrackedInformer(sc scope.Scope) *Informer {
	return &Informer{bus: b, info: partInfo{id: notification.NewParticipantID(), scope: sc}, untrack: func() {}}
}
