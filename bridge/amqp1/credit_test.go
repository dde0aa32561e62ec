package amqp1

import (
	"errors"
	"testing"

	amqp "github.com/Azure/go-amqp"
)

// TestWindowGrantsOnlyWhenTheBrokerSentItAll drives a window of 4 through
// a broker that keeps to its credit, then through one that overshoots:
// the grant makes up for the overshoot, and a whole window over the
// credit fails.
func TestWindowGrantsOnlyWhenTheBrokerSentItAll(t *testing.T) {
	w := newWindow(4)
	if got := w.open(); got != 4 {
		t.Fatalf("first grant %d", got)
	}
	for i := range 3 {
		if err := w.received(); err != nil || w.exhausted() {
			t.Fatalf("message %d: %v, exhausted %v", i, err, w.exhausted())
		}
	}
	if err := w.received(); err != nil || !w.exhausted() {
		t.Fatalf("last message of the window: %v, exhausted %v", err, w.exhausted())
	}
	if got := w.refill(); got != 4 || w.exhausted() {
		t.Fatalf("refill %d, exhausted %v", got, w.exhausted())
	}
	// The broker sends 6 on a credit of 4: the link credit of the client
	// library is -2, so the grant of 6 makes it 4 again.
	for range 6 {
		if err := w.received(); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.refill(); got != 6 {
		t.Fatalf("refill after an overshoot of 2: %d", got)
	}
	for range 7 {
		if err := w.received(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.received(); !errors.Is(err, ErrCreditExceeded) {
		t.Fatalf("a window over the credit: %v", err)
	}
}

// TestOutcomeOnlyAcceptedIsSent: a message the broker released, modified,
// rejected or settled without an outcome is not on the broker.
func TestOutcomeOnlyAcceptedIsSent(t *testing.T) {
	if err := outcome(&amqp.StateAccepted{}); err != nil {
		t.Fatalf("accepted: %v", err)
	}
	for _, st := range []amqp.DeliveryState{&amqp.StateReleased{}, &amqp.StateModified{DeliveryFailed: true},
		&amqp.StateRejected{Error: &amqp.Error{Condition: amqp.ErrCondResourceLimitExceeded}}, &amqp.StateRejected{}, nil} {
		if err := outcome(st); !errors.Is(err, ErrNotAccepted) {
			t.Errorf("%T: %v", st, err)
		}
	}
}
