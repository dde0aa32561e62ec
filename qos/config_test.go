package qos

import (
	"testing"
	"unsafe"
)

// TestHeldDatagrams: the hold is bounded by the datagram count for small
// datagrams and by the bytes, with the overhead a held datagram is charged,
// for large ones.
func TestHeldDatagrams(t *testing.T) {
	c := ReceiverConfig{ReorderDatagrams: 100, ReorderBytes: 1 << 20}
	if got := c.HeldDatagrams(1000); got != 100 {
		t.Fatalf("1000-byte datagrams: %d, want the count bound 100", got)
	}
	want := (1 << 20) / (60000 + heldOverhead + recordOverhead)
	if got := c.HeldDatagrams(60000); got != want {
		t.Fatalf("60000-byte datagrams: %d, want %d", got, want)
	}
	if got, d := (ReceiverConfig{}).HeldDatagrams(1), DefaultReceiverConfig().HeldDatagrams(1); got != d || got != DefaultReorderDatagrams {
		t.Fatalf("zero config: %d, defaults %d", got, d)
	}
}

// TestGapOverhead: the bytes a receiver counts per hole cover its entry.
func TestGapOverhead(t *testing.T) {
	if size := unsafe.Sizeof(gap{}); size > gapOverhead {
		t.Errorf("a gap takes %d bytes, gapOverhead counts %d", size, gapOverhead)
	}
}
