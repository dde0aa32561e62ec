package bus

import (
	"time"

	"github.com/rsbd/rsbd/scope"
)

// Handler receives the payload of one event. It runs on a goroutine of the
// endpoint, must not block and must not retain payload after it returns.
type Handler func(payload []byte)

// Endpoint is one participant of a bus.
type Endpoint interface {
	// Publish sends payload on topic (an RSB scope such as /bench/thr/1/).
	// payload may be reused by the caller once Publish returns.
	Publish(topic string, payload []byte) error
	// Flush pushes publishes an endpoint buffers onto the wire without
	// waiting for a round trip.
	Flush() error
	// Sync returns once everything published so far has left the endpoint.
	Sync() error
	// Subscribe calls fn for every event on topic until cancel is called.
	Subscribe(topic string, fn Handler) (cancel func(), err error)
	// Close releases the endpoint.
	Close() error
}

// TopicPublisher is implemented by endpoints that publish on a topic
// through a handle made once per topic, as an RSB program publishes
// through an informer that holds its scope parsed: a sender that spreads
// its events over many topics then does not look each topic up per event.
type TopicPublisher interface {
	// PublishOn returns a function that publishes payload on topic, with
	// Publish's rules.
	PublishOn(topic string) (func(payload []byte) error, error)
}

// Publishers returns a publishing function per topic: the endpoint's own
// handles when it is a TopicPublisher, else calls of its Publish.
func Publishers(ep Endpoint, topics []string) ([]func(payload []byte) error, error) {
	tp, _ := ep.(TopicPublisher)
	out := make([]func([]byte) error, len(topics))
	for i, t := range topics {
		if tp == nil {
			out[i] = func(p []byte) error { return ep.Publish(t, p) }
			continue
		}
		fn, err := tp.PublishOn(t)
		if err != nil {
			return nil, err
		}
		out[i] = fn
	}
	return out, nil
}

// publisherOn parses topic once and returns a function that publishes on
// its scope through publish.
func publisherOn(topic string, publish func(scope.Scope, []byte) error) (func([]byte) error, error) {
	sc, err := scope.Parse(topic)
	if err != nil {
		return nil, err
	}
	return func(p []byte) error { return publish(sc, p) }, nil
}

// LossCounter is implemented by endpoints that learn of unrecoverable loss
// (rsbd's reliable streams report it).
type LossCounter interface {
	// Losses returns the number of lost datagrams reported so far.
	Losses() int64
}

// RoundTripper is implemented by endpoints whose pinger reads the reply on
// its own goroutine (the raw UDP reference).
type RoundTripper interface {
	// RoundTrip sends payload and waits up to timeout for a reply that
	// match accepts.
	RoundTrip(payload []byte, timeout time.Duration, match func([]byte) bool) (bool, error)
}

// InlineReplier is implemented by endpoints whose handlers may call Publish
// and Flush of the same endpoint: a ponger then replies, and a pinger sends
// its next ping, on the goroutine that delivered the event, without a
// hand-off to a goroutine of its own.
type InlineReplier interface {
	// InlineReply reports whether a Handler may call Publish and Flush.
	// It holds for a few replies per event received (ping-pong), not for
	// bursts: a handler blocked in a full write cannot drain its own input.
	InlineReply() bool
}
