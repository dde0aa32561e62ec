package grpcbus

import (
	"testing"
)

// drive has a peer send every message the window allows and the reader
// take them all, n bytes each; starve marks the reader as having waited
// before each message it takes. It returns the grants made.
func drive(w *recvWindow, msgs, n int, starve bool) (grants []uint32) {
	for range msgs {
		if starve {
			w.starved()
		}
		if d, _ := w.take(n); d > 0 {
			grants = append(grants, d)
		}
	}
	return grants
}

func TestRecvWindowFixedWhileReaderLags(t *testing.T) {
	w := newRecvWindow(8, 1024, 1<<20)
	grants := drive(&w, 100, 10, false)
	if len(grants) == 0 {
		t.Fatal("no grant")
	}
	for _, g := range grants {
		if g != 4 {
			t.Fatalf("grants %v; want half the window of 8 each", grants)
		}
	}
	if o := w.outstanding(); o > 8 {
		t.Errorf("%d credits outstanding; window 8", o)
	}
}

func TestRecvWindowGrowsToCap(t *testing.T) {
	w := newRecvWindow(8, 64, 1<<20)
	drive(&w, 1000, 10, true)
	if w.win != 64 {
		t.Fatalf("window %d; want the cap 64", w.win)
	}
	if o := w.outstanding(); o > 64 || o < 32 {
		t.Errorf("%d credits outstanding; want between half the cap and the cap", o)
	}
}

func TestRecvWindowBoundedInBytes(t *testing.T) {
	const budget, n = 64 << 10, 1024
	w := newRecvWindow(8, 4096, budget)
	drive(&w, 5000, n, true)
	most := budget / (n + queuedOverhead)
	if o := w.outstanding(); o > most {
		t.Errorf("%d credits of %d B outstanding; the budget allows %d", o, n, most)
	}
	if w.win > 2*most {
		t.Errorf("window grew to %d past what the budget allows (%d)", w.win, most)
	}
	// Large messages shrink what is granted at once, down to one.
	grants := drive(&w, 100, 1<<20, true)
	if o := w.outstanding(); o > 1 {
		t.Errorf("%d credits outstanding for messages larger than the budget", o)
	}
	if len(grants) == 0 {
		t.Error("no grant for messages larger than the budget: the stream would stall")
	}
	// The assumed size decays, and small messages get their window back.
	drive(&w, 1000, n, true)
	if o := w.outstanding(); o < most/2 {
		t.Errorf("%d credits outstanding after small messages again; want at least %d", o, most/2)
	}
}

func TestRecvWindowAdmitsWithinGrants(t *testing.T) {
	w := newRecvWindow(4, 4, 1<<20)
	if !w.admits(4) || w.admits(5) {
		t.Fatal("the initial window admits messages 1 to 4 alone")
	}
	if d, _ := w.take(1); d != 0 {
		t.Fatalf("grant %d after one message of a window of 4", d)
	}
	d, cum := w.take(1)
	if d != 2 || cum != 2 {
		t.Fatalf("grant %d (cumulative %d) after half the window; want 2, 2", d, cum)
	}
	if !w.admits(6) || w.admits(7) {
		t.Error("after a grant of 2 the window admits messages up to 6 alone")
	}
}

// FuzzRecvWindow drives a window with messages of fuzzed sizes and reader
// waits: every grant keeps the outstanding credits within the message cap
// and the byte budget at the size of the message just taken, the
// cumulative grant is the sum of the deltas, and a stream always gets
// credit again once its reader took everything.
func FuzzRecvWindow(f *testing.F) {
	f.Add(uint16(8), uint16(64), uint32(1<<16), []byte{0, 1, 2, 255, 7})
	f.Add(uint16(1), uint16(1), uint32(1), []byte{200, 200, 3})
	f.Fuzz(func(t *testing.T, initial, maxMsgs uint16, budget uint32, ops []byte) {
		w := newRecvWindow(int(initial), int(maxMsgs), int(budget%(64<<20)))
		var sum uint64
		for _, op := range ops {
			if op&1 == 1 {
				w.starved()
			}
			n := int(op>>1) << (op >> 5)
			for w.outstanding() > 0 {
				d, cum := w.take(n)
				if d == 0 {
					continue
				}
				sum += uint64(d)
				if cum != sum {
					t.Fatalf("cumulative grant %d; deltas sum to %d", cum, sum)
				}
				o := w.outstanding()
				if o > w.cap {
					t.Fatalf("%d credits outstanding past the cap %d", o, w.cap)
				}
				if o > 1 && o*(n+queuedOverhead) > w.budget {
					t.Fatalf("%d credits of %d B outstanding past the budget %d", o, n, w.budget)
				}
				break
			}
			if w.outstanding() == 0 {
				t.Fatal("the reader took everything and the peer has no credit")
			}
		}
	})
}
