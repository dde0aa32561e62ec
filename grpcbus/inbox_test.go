package grpcbus

import (
	"testing"

	"github.com/rsbd/rsbd/proto/grpcbuspb"
)

// TestInboxKeepsOrderAndBounds puts Messages and other frames in turns
// with takes that lag behind, through compactions and resets: the reader
// gets them in order, Messages past the window and control frames past
// controlSlack are refused.
func TestInboxKeepsOrderAndBounds(t *testing.T) {
	b := newInbox(newRecvWindow(16, 16, 1<<20))
	var seq, next uint64
	for round := range 200 {
		for range round%7 + 1 {
			if b.win.admits(seq + 1) {
				seq++
				if !b.putMessage(inFrame{payload: []byte{byte(seq)}}, seq) {
					t.Fatalf("message %d refused within the window", seq)
				}
			}
		}
		if b.putMessage(inFrame{payload: []byte{0}}, b.win.limit+1) {
			t.Fatal("a message past the window was queued")
		}
		for range round % 5 {
			in, _, _, ok := b.take()
			if !ok {
				break
			}
			if next++; in.payload[0] != byte(next) {
				t.Fatalf("took message %d where %d was next", in.payload[0], byte(next))
			}
		}
	}
	msgs, bytes, _ := b.held()
	if msgs != int(seq-next) || bytes != msgs {
		t.Errorf("held %d messages of %d bytes; %d were queued and not taken", msgs, bytes, seq-next)
	}
	halfClose := inFrame{fr: &grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_HalfClose{}}}
	for i := range controlSlack {
		if !b.putControl(halfClose) {
			t.Fatalf("control frame %d refused", i)
		}
	}
	if b.putControl(halfClose) {
		t.Error("control frames past controlSlack queued")
	}
}

// TestInboxWakesWaitingReader has a reader find the inbox empty: the next
// frame signals it, and only then.
func TestInboxWakesWaitingReader(t *testing.T) {
	b := newInbox(newRecvWindow(4, 4, 1<<20))
	if _, _, _, ok := b.take(); ok {
		t.Fatal("took a frame from an empty inbox")
	}
	b.putMessage(inFrame{payload: []byte{1}}, 1)
	select {
	case <-b.ready:
	default:
		t.Fatal("a waiting reader was not signalled")
	}
	b.putMessage(inFrame{payload: []byte{2}}, 2)
	select {
	case <-b.ready:
		t.Fatal("a reader that is not waiting was signalled")
	default:
	}
}
