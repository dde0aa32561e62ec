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
