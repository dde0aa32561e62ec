package engine

import (
	"net/netip"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
)

// TestReaderWaitsForBriefSection: a received batch that finds another
// goroutine's section under way waits for it and is handled on the
// reader's goroutine, not handed to the engine goroutine; under Hold it
// queues.
func TestReaderWaitsForBriefSection(t *testing.T) {
	e, _ := newTestEngine(t, nil)
	pkt := []Packet{{Data: []byte("not a datagram"), From: netip.MustParseAddrPort("127.0.0.1:9")}}
	e.mu.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Receive(pkt)
	}()
	testutil.WaitFor(t, 10*time.Second, "the reader waiting", func() bool { return e.Paths().ReceiveWaited == 1 })
	e.mu.Unlock()
	<-done
	if p := e.Paths(); p.ReceiveDirect != 1 || p.ReceiveQueued != 0 || len(e.rxCh) != 0 {
		t.Fatalf("paths %+v, %d batches queued: want one handled by the reader", p, len(e.rxCh))
	}
	release := e.Hold()
	e.Receive(pkt)
	release()
	if p := e.Paths(); p.ReceiveQueued != 1 || len(e.rxCh) != 1 {
		t.Fatalf("under Hold: paths %+v, %d batches queued: want one queued", p, len(e.rxCh))
	}
}
