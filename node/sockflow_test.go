package node

import (
	"testing"
	"time"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
)

// TestSmallEventsToIdleSocketClientLoseNothing: a socket client on daemon
// B stops reading while a client of daemon A publishes far more small
// reliable events than B's queue for it may hold in frames of the old
// count bound. B must hold its ACKs early enough that what is still in
// flight fits the queue: A's publisher waits, and once the client reads
// again every event arrives and B dropped none.
func TestSmallEventsToIdleSocketClientLoseNothing(t *testing.T) {
	const n = 300_000
	a, b, sub := remoteListener(t, "/flood/")
	pub := dialSocket(t, a)
	sent := make(chan error, 1)
	ev := testEvent("/flood/", 0, make([]byte, 8))
	ev.ID.SenderID = notification.NewParticipantID()
	go func() {
		sent <- sendBatched(pub, ev, n, 256, func(i int, ev *notification.Event) { ev.ID.SequenceNumber = uint32(i) })
	}()
	waitFor(t, 30*time.Second, "A's window to fill", func() bool {
		a.eng.mu.Lock()
		defer a.eng.mu.Unlock()
		return len(a.eng.blocked) > 0 || b.sock.Stats().Drops[rsbsocket.DropQueueFull] > 0
	})
	if err := sub.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, n)
	var body []byte
	for got := 0; got < n; {
		var err error
		if body, err = sub.RecvInto(body); err != nil {
			t.Fatalf("after %d of %d events (B dropped %d): %v", got, n, b.sock.Stats().Drops[rsbsocket.DropQueueFull], err)
		}
		f, err := rsbsocket.ParseFrame(body)
		if err != nil || f.Scope.String() != "/flood/" || f.SequenceNumber >= n || seen[f.SequenceNumber] {
			t.Fatalf("unexpected frame (seq %d): %v", f.SequenceNumber, err)
		}
		seen[f.SequenceNumber] = true
		got++
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if d := b.sock.Stats().Drops; d != [rsbsocket.NumDropReasons]uint64{} {
		t.Fatalf("B dropped frames: %v", d)
	}
}
