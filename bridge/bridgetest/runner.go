package bridgetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// Inbound runs r as the bridge runner does, Receive again after a
// back-off whenever it ends, until the end of the test, and returns what
// it delivers through a channel of buf messages: with 0, the receiver
// hands a message on (and may acknowledge it) only once the test took it.
// The end of the test closes r.
func Inbound(t testing.TB, r bridge.Receiver, buf int) <-chan bridge.Message {
	t.Helper()
	out := make(chan bridge.Message, buf)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			err := r.Receive(ctx, func(ctx context.Context, m bridge.Message) error {
				select {
				case out <- m:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			if errors.Is(err, bridge.ErrClosed) {
				return
			}
			select {
			case <-time.After(retryBackoff):
			case <-ctx.Done():
			}
		}
	}()
	t.Cleanup(func() { cancel(); _ = r.Close(); <-done })
	return out
}

// Next returns the next message of ch; the test fails if none comes
// within timeout.
func Next(t testing.TB, ch <-chan bridge.Message, timeout time.Duration) bridge.Message {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(timeout):
		t.Fatal("no message")
	}
	return bridge.Message{}
}

// SendAll sends events as the bridge runner does: a failed batch again,
// after a back-off, until the broker takes it. Each Send, and all of them
// together, may take timeout; it returns how many times a batch was sent
// again.
func SendAll(t testing.TB, s bridge.Sender, events []*cloudevent.Event, timeout time.Duration) (retries int) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err := s.Send(ctx, events)
		cancel()
		if err == nil {
			return retries
		}
		if time.Now().After(deadline) {
			t.Fatalf("send: %v", err)
		}
		retries++
		select {
		case <-time.After(retryBackoff):
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		}
	}
}

// SendStream sends events 0 to n-1, made by event, through s in batches
// of batch, each with SendAll. With restart set, it calls restart (which
// restarts the broker in the background and reports the outcome) before
// the first batch of the second half, and waits for that restart to end
// before it returns. It returns how many times a batch was sent again.
func SendStream(t testing.TB, s bridge.Sender, n, batch int, event func(int) *cloudevent.Event,
	restart func() <-chan error, timeout time.Duration) (retries int) {
	t.Helper()
	var restarted <-chan error
	for i := 0; i < n; i += batch {
		if restart != nil && i >= n/2 && restarted == nil {
			restarted = restart()
		}
		events := make([]*cloudevent.Event, 0, batch)
		for j := i; j < min(n, i+batch); j++ {
			events = append(events, event(j))
		}
		retries += SendAll(t, s, events, timeout)
	}
	if restarted != nil {
		if err := <-restarted; err != nil {
			t.Fatal(err)
		}
	}
	return retries
}

// SizedEvent returns Event with payloads of at least size bytes, as
// SendStream's event.
func SizedEvent(size int) func(int) *cloudevent.Event {
	return func(i int) *cloudevent.Event { return Event(i, size) }
}

// Missing lists the numbers below n not in seen: what a failing stream
// test names as lost.
func Missing(seen map[int]bool, n int) []int {
	var m []int
	for i := range n {
		if !seen[i] {
			m = append(m, i)
		}
	}
	return m
}
