package amqp1

import (
	"errors"
	"fmt"
)

// ErrCreditExceeded: the broker sent a receiving link a window's worth of
// messages more than it was granted. The receiver gives up the link, so
// the broker gives the unaccepted messages again on a new one.
var ErrCreditExceeded = errors.New("amqp: the broker sent more messages than the link credit")

// window is the flow control of a receiving link, a pure state machine.
// It grants size messages and grants again only once the broker sent all
// of them, so every flow frame reaches a broker with no credit left and
// nothing in flight. A broker that adds up flow frames arriving while it
// sends (RabbitMQ's AMQP 1.0 plugin does) then never sends more than it
// was granted; client libraries that top credit up while messages are in
// flight make such a broker overshoot, and then wait for ever for credit
// they believe they already have.
//
// The client library keeps the link credit as granted minus received, so
// when the broker did overshoot, the next grant is size plus the
// overshoot: the flow frame still says size.
type window struct {
	size int64
	owed int64 // granted and not yet received; below zero after an overshoot
}

// newWindow returns the window of a link that grants size messages at a
// time.
func newWindow(size int) *window { return &window{size: int64(size)} }

// open returns the credit a new link grants first.
func (w *window) open() uint32 {
	w.owed = w.size
	return uint32(w.size)
}

// received counts a message the link read. It fails when the broker
// sent a whole window more than it was granted.
func (w *window) received() error {
	w.owed--
	if -w.owed >= w.size {
		return fmt.Errorf("%w: %d messages over a credit of %d", ErrCreditExceeded, -w.owed, w.size)
	}
	return nil
}

// exhausted reports whether the broker sent all it was granted, so a
// grant is due.
func (w *window) exhausted() bool { return w.owed <= 0 }

// refill returns the credit to issue once the window is exhausted: size,
// plus what the broker sent over its credit.
func (w *window) refill() uint32 {
	n := w.size - w.owed
	w.owed = w.size
	return uint32(n)
}

// manualCredit is go-amqp's ReceiverOptions.Credit that leaves granting
// credit to the receiver (window).
const manualCredit = -1
