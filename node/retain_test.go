package node

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/rsbd/rsbd/scope"
)

// retainPayload is the data of event seq: its size varies from a few bytes
// to several fragments, and every byte depends on seq.
func retainPayload(seq uint32) []byte {
	sizes := []int{5, 900, 1500, 9000, 70000, 150000}
	d := make([]byte, sizes[int(seq)%len(sizes)])
	for i := 0; i < len(d); i += 4 {
		var w [4]byte
		binary.LittleEndian.PutUint32(w[:], seq*2654435761+uint32(i))
		copy(d[i:], w[:])
	}
	return d
}

// TestRetainedEventsStayIntact keeps every event a subscription receives
// (a Handler may) and checks that their data still holds what was sent
// after all later datagrams arrived: decoded events may alias received
// buffers only where nothing reuses them.
func TestRetainedEventsStayIntact(t *testing.T) {
	for _, mode := range []string{"embedded", "socket"} {
		t.Run(mode, func(t *testing.T) {
			nodes := startNodes(t, 2, func(_ int, c *Config) {
				if mode == "embedded" {
					c.SocketAddr = "off"
				}
			})
			a, b := nodes[0], nodes[1]
			var got collector
			defer b.Subscribe(scope.MustParse("/keep/"), got.handle)()
			waitFor(t, 10*time.Second, "interest gossiped", func() bool {
				return a.interest().Wanted(groupID("/keep/"))
			})
			const events = 600
			for seq := range uint32(events) {
				if err := a.Publish(context.Background(), testEvent("/keep/x/", seq, retainPayload(seq))); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, 30*time.Second, "every event", func() bool { return got.len() == events })
			seen := make([]bool, events)
			for i := range events {
				ev := got.get(i)
				seq := ev.ID.SequenceNumber
				if seq >= events || seen[seq] {
					t.Fatalf("event %d: unexpected or repeated sequence number %d", i, seq)
				}
				seen[seq] = true
				if want := retainPayload(seq); !bytes.Equal(ev.Data, want) {
					t.Fatalf("event %d (%d bytes) changed after delivery", seq, len(want))
				}
			}
		})
	}
}
