package node

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// TestSmallEventsToIdleSocketClientLoseNothing: a socket client on daemon
// B stops reading while a client of daemon A publishes far more small
// reliable events than B's queue for it may hold in frames of the old
// count bound. B must hold its ACKs early enough that what is still in
// flight fits the queue: A's publisher waits, and once the client reads
// again every event arrives and B dropped none.
//
// The publisher floods until A's window is full (or B drops), however many
// events the path holds before that (about 290 000 here), then stops.
func TestSmallEventsToIdleSocketClientLoseNothing(t *testing.T) {
	const maxEvents = 3_000_000 // far more than the path holds
	a, b, sub := remoteListener(t, "/flood/")
	pub := dialSocket(t, a)
	var stop atomic.Bool
	sent := make(chan floodResult, 1)
	ev := testutil.Event("/flood/", 0, make([]byte, 8))
	ev.ID.SenderID = notification.NewParticipantID()
	go func() {
		n, err := sendUntil(pub, ev, maxEvents, 256, &stop, func(i int, ev *notification.Event) { ev.ID.SequenceNumber = uint32(i) })
		sent <- floodResult{n, err}
	}()
	testutil.WaitFor(t, 60*time.Second, "A's window to fill", func() bool {
		return a.eng.Blocked() || b.sock.Stats().Drops[rsbsocket.DropQueueFull] > 0
	})
	stop.Store(true)
	var got atomic.Int64
	readErr := make(chan error, 1)
	go readFlood(sub, maxEvents, &got, readErr)
	var r floodResult
	select {
	case r = <-sent:
	case err := <-readErr:
		t.Fatalf("after %d events: %v", got.Load(), err)
	case <-time.After(60 * time.Second):
		t.Fatalf("the publisher did not finish (%d events read)", got.Load())
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	testutil.WaitFor(t, 60*time.Second, "every event", func() bool {
		select {
		case err := <-readErr:
			t.Fatalf("after %d of %d events (B dropped %d): %v", got.Load(), r.n, b.sock.Stats().Drops[rsbsocket.DropQueueFull], err)
		default:
		}
		return got.Load() == int64(r.n)
	})
	if d := b.sock.Stats().Drops; d != [rsbsocket.NumDropReasons]uint64{} {
		t.Fatalf("B dropped frames: %v", d)
	}
	_ = sub.Close()
	<-readErr // the reader ends with the connection
}

// floodResult is how many events a flooding publisher sent, and why it
// stopped early if it did.
type floodResult struct {
	n   int
	err error
}

// readFlood reads the flood's frames from c until it fails, counting each
// in got; a frame off the scope, out of range or seen before ends it with
// an error. It sends the error that ended it to done.
func readFlood(c *sockclient.ClientConn, max int, got *atomic.Int64, done chan<- error) {
	seen := make([]bool, max)
	var body []byte
	for {
		var err error
		if body, err = c.RecvInto(body); err != nil {
			done <- err
			return
		}
		f, err := frame.ParseFrame(body)
		if err != nil || f.Scope.String() != "/flood/" || int(f.SequenceNumber) >= max || seen[f.SequenceNumber] {
			done <- fmt.Errorf("unexpected frame (seq %d): %v", f.SequenceNumber, err)
			return
		}
		seen[f.SequenceNumber] = true
		got.Add(1)
	}
}
