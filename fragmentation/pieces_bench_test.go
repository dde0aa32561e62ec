package fragmentation

import (
	"fmt"
	"testing"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// BenchmarkSplitEvent: what Node.Publish spends cutting an event larger
// than a datagram into fragments (on the publisher's goroutine), with the
// loopback datagram size.
func BenchmarkSplitEvent(b *testing.B) {
	capacity := DefaultLoopbackDatagram - dataHeader - recordOverhead
	for _, size := range []int{64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			ev := &notification.Event{Scope: scope.MustParse("/bench/split/"), WireSchema: notification.SchemaBytes,
				Data: make([]byte, size), ID: notification.EventID{SenderID: [16]byte{1}}}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var frags [][]byte
			for b.Loop() {
				ev.ID.SequenceNumber++
				var err error
				var owner *Buf
				if frags, owner, err = SplitEvent(frags[:0], ev, capacity); err != nil {
					b.Fatal(err)
				}
				if owner != nil {
					owner.Drop(1) // as the engine does once no stream holds it
				}
			}
		})
	}
}
