package client

import (
	"fmt"
	"time"
)

// Option tunes a participant. Options that do not concern a participant's
// kind are ignored by it.
type Option func(*options)

// options collects what the Option functions set.
type options struct {
	filters     []Filter
	queueSize   int
	queueBytes  int64
	policy      DropPolicy
	wireSchema  string
	callTimeout time.Duration
	inline      bool
	borrow      bool
	raw         bool

	announceReserved bool
}

func collect(opts []Option) options {
	var o options
	for _, fn := range opts {
		if fn != nil {
			fn(&o)
		}
	}
	return o
}

// checkQueue reports a negative queue bound.
func (o options) checkQueue() error {
	if o.queueSize < 0 || o.queueBytes < 0 {
		return fmt.Errorf("%w: queue bounds %d events, %d bytes", ErrConfig, o.queueSize, o.queueBytes)
	}
	return nil
}

// WithFilter adds filters to a Listener or Reader: an event is delivered
// only when it passes all of them.
func WithFilter(f ...Filter) Option {
	return func(o *options) { o.filters = append(o.filters, f...) }
}

// WithQueue sets the queue bound and drop policy of a Listener, Reader or
// LocalServer method (size 0 keeps the Bus default).
func WithQueue(size int, policy DropPolicy) Option {
	return func(o *options) { o.queueSize, o.policy = size, policy }
}

// WithQueueBytes bounds what the events in the queue of a Listener,
// Reader or LocalServer method weigh together: their data and a fixed
// overhead each (0 keeps the Bus default, Config.QueueBytes). Past it
// events are dropped by the participant's DropPolicy, as past its size,
// and counted in its Stats (DroppedForBytes); an event heavier than the
// bound alone is still queued when the queue is empty.
func WithQueueBytes(n int64) Option {
	return func(o *options) { o.queueBytes = n }
}

// WithInlineDelivery makes a Listener call its handlers on the goroutine
// that delivers each event, without its queue and goroutine: events from
// the bus on the Bus's receiving goroutine (over the socket protocol, the
// connection's reader), events published by the same Bus on the
// publisher's goroutine. An event then costs no hand-off between
// goroutines, which on a loaded host is most of a round trip's time in the
// client (docs/BENCHMARKS.md measures Go client round trips with and
// without it). In exchange a handler holds up every delivery of the Bus
// while it runs: it must be quick and must not wait for another event of
// the same Bus (a RemoteServer call, a Reader), which could never arrive;
// and handlers of events published on several goroutines may run at once.
// WithQueue does not apply.
func WithInlineDelivery() Option {
	return func(o *options) { o.inline = true }
}

// WithoutRetention promises that a Listener's handlers keep neither the
// *Event they are given nor anything it refers to (Data, Payload, Causes,
// the meta data's slices) once they return: a handler that needs any of
// it later copies it. The Listener then gives its events back for reuse
// after its handlers ran, and an event received over the socket protocol
// costs no allocation of its own (its payload's conversion aside), which
// spares the collector most of a high-rate stream's garbage. A handler
// that breaks the promise sees the event change under it.
func WithoutRetention() Option {
	return func(o *options) { o.borrow = true }
}

// WithoutConversion makes a Listener or Reader hand over its events with
// their payloads unconverted: Payload and PayloadErr stay nil whatever the
// wire schema, and Data holds the payload as it was sent. A participant
// that reads Data alone (its own codec, raw bytes) spares the registry's
// conversion of every event, which for most schemas allocates the
// converted value (for bytes, its boxing into Payload).
func WithoutConversion() Option {
	return func(o *options) { o.raw = true }
}

// WithWireSchema makes an Informer convert payloads with the converter of
// the given wire schema instead of choosing one by Go type.
func WithWireSchema(schema string) Option {
	return func(o *options) { o.wireSchema = schema }
}

// WithCallTimeout sets the timeout a RemoteServer applies to calls whose
// context has no deadline (default DefaultCallTimeout).
func WithCallTimeout(d time.Duration) Option {
	return func(o *options) { o.callTimeout = d }
}

// WithReservedAnnouncement announces a Listener or Reader under /__rsb/
// as any other participant (such participants are otherwise not
// announced). Over the socket protocol a connection whose participants
// are all unannounced receives what rsbd gives a silent client, by
// default every event; a tool listening only to introspection announces
// its listener so that its daemon sends it just that.
func WithReservedAnnouncement() Option {
	return func(o *options) { o.announceReserved = true }
}
