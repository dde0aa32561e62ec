package fragmentation

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

func TestAssemblerPartialEventBound(t *testing.T) {
	a := mustAssembler(t, Config{MaxPartialEvents: 3})
	var all [][][]byte
	for k := range 5 {
		frags := mustAppendSplit(t, minimalEvent(1, uint32(k), payload(byte(k), 2000)), 500)
		all = append(all, frags)
		feed(t, a, t0.Add(time.Duration(k)*time.Millisecond), frags, []int{0})
		checkBounds(t, a)
	}
	drops := a.AppendDrops(nil)
	if a.Len() != 3 || len(drops) != 2 {
		t.Fatalf("%d partials, drops %+v", a.Len(), drops)
	}
	for i, d := range drops {
		if d.Reason != ReasonEvictedPartials || d.SequenceNumber != uint32(i) || d.Received != 1 {
			t.Fatalf("drop %d: %+v (oldest must go first)", i, d)
		}
	}
	// The survivors still complete.
	for k := 2; k < 5; k++ {
		got := feed(t, a, t0, all[k], identity(len(all[k]))[1:])
		if len(got) != 1 {
			t.Fatalf("event %d did not complete", k)
		}
	}
	if a.Len() != 0 || a.BufferedBytes() != 0 {
		t.Fatalf("state left: %d, %d", a.Len(), a.BufferedBytes())
	}
}

// TestAssemblerExpiredGoFirst checks that a full Assembler reports expired
// partial events as timeouts rather than evicting a live one.
func TestAssemblerExpiredGoFirst(t *testing.T) {
	a := mustAssembler(t, Config{MaxPartialEvents: 2, Timeout: time.Second})
	for k := range 3 {
		frags := mustAppendSplit(t, minimalEvent(2, uint32(k), payload(byte(k), 2000)), 500)
		now := t0
		if k == 1 {
			now = t0.Add(900 * time.Millisecond)
		}
		if k == 2 {
			now = t0.Add(1500 * time.Millisecond)
		}
		feed(t, a, now, frags, []int{0})
	}
	drops := a.AppendDrops(nil)
	if len(drops) != 1 || drops[0].Reason != ReasonTimeout || drops[0].SequenceNumber != 0 || a.Len() != 2 {
		t.Fatalf("drops %+v, %d partials", drops, a.Len())
	}
}

func TestAssemblerByteBound(t *testing.T) {
	cfg := Config{MaxEventSize: 20000, MaxBufferedBytes: 50000}
	a := mustAssembler(t, cfg)
	var all [][][]byte
	for k := range 6 {
		frags := mustAppendSplit(t, minimalEvent(3, uint32(k), payload(byte(k), 15000)), 1000)
		all = append(all, frags)
		// Every other fragment, so most data waits aside out of order.
		for i := 0; i < len(frags)-1; i += 2 {
			if _, err := a.AddBytes(t0, frags[i]); err != nil {
				t.Fatalf("event %d fragment %d: %v", k, i, err)
			}
			checkBounds(t, a)
		}
	}
	drops := a.AppendDrops(nil)
	if len(drops) == 0 {
		t.Fatalf("no evictions under a 50000-byte budget")
	}
	for i, d := range drops {
		if d.Reason != ReasonEvictedBytes || d.SequenceNumber != uint32(i) {
			t.Fatalf("drop %d: %+v (oldest must go first)", i, d)
		}
	}
	// The newest event survived and completes.
	last := all[len(all)-1]
	var got []*rsbpb.Notification
	for i := 1; i < len(last); i += 2 {
		got = append(got, feed(t, a, t0, last, []int{i})...)
	}
	got = append(got, feed(t, a, t0, last, []int{len(last) - 1})...)
	if len(got) != 1 || len(got[0].Data) != 15000 {
		t.Fatalf("newest event did not complete")
	}
	checkBounds(t, a)
}

func TestAssemblerEventTooLarge(t *testing.T) {
	a := mustAssembler(t, Config{MaxEventSize: 5000, MaxBufferedBytes: 100000})
	frags := mustAppendSplit(t, minimalEvent(4, 1, payload(4, 6000)), 1000)
	for i := range frags {
		_, err := a.AddBytes(t0, frags[i])
		if err != nil {
			wantRefusal(t, err, ReasonEventTooLarge)
			if i != 5 {
				t.Fatalf("refused at fragment %d, want 5 (the first that exceeds 5000 bytes)", i)
			}
			break
		}
		if a.BufferedBytes() > 5000+partialOverhead+200 {
			t.Fatalf("buffered %d bytes for a 5000-byte limit", a.BufferedBytes())
		}
	}
	drops := a.AppendDrops(nil)
	if len(drops) != 1 || drops[0].Reason != ReasonEventTooLarge || drops[0].Bytes > 5000 || a.Len() != 0 {
		t.Fatalf("drops %+v", drops)
	}
}

// TestAssemblerClaimsDoNotAllocate sends first fragments that claim huge
// events: nothing is reserved beyond the data received and the caps.
func TestAssemblerClaimsDoNotAllocate(t *testing.T) {
	a := mustAssembler(t, Config{})
	f := decodeFragment(t, mustAppendSplit(t, minimalEvent(5, 1, payload(5, 1000)), 0)[0])
	f.NumDataParts = proto.Uint32(DefaultMaxParts) // 65536 parts of 1000 bytes: beyond MaxEventSize
	b := mustMarshal(t, f)
	before := testingAllocBytes(func() {
		if _, err := a.AddBytes(t0, b); err != nil {
			t.Fatal(err)
		}
	})
	if a.BufferedBytes() > 1000+2*partialOverhead || before > 64<<10 {
		t.Fatalf("a claimed size was allocated: charged %d, allocated %d", a.BufferedBytes(), before)
	}
	f.NumDataParts = proto.Uint32(DefaultMaxParts + 1)
	f.Notification.EventId.SequenceNumber = proto.Uint32(2)
	if _, err := a.AddBytes(t0, mustMarshal(t, f)); ReasonOf(err) != ReasonTooManyParts {
		t.Fatalf("over MaxParts: %v", err)
	}
	// A plausible claim is presized within the budget, and charged.
	g := decodeFragment(t, mustAppendSplit(t, minimalEvent(5, 3, payload(5, 1000)), 0)[0])
	g.NumDataParts = proto.Uint32(100)
	if _, err := a.AddBytes(t0, mustMarshal(t, g)); err != nil {
		t.Fatal(err)
	}
	if got := a.BufferedBytes(); got < 100*1000 || got > 101*1100+3*partialOverhead+1000 {
		t.Fatalf("presized event charged %d bytes", got)
	}
	checkBounds(t, a)
}

// testingAllocBytes returns the bytes allocated (by any goroutine) while fn
// runs; the callers' bounds leave ample room for the test framework.
func testingAllocBytes(fn func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	fn()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// TestAddBytesDoesNotRetainInput overwrites each input buffer right after
// AddBytes returns, as a datagram reader reusing its buffer would.
func TestAddBytesDoesNotRetainInput(t *testing.T) {
	n := richEvent(7, 1, payload(7, 5000))
	frags := mustAppendSplit(t, n, 700)
	a := mustAssembler(t, Config{})
	buf := make([]byte, 1000)
	var got *rsbpb.Notification
	for _, i := range rand.New(rand.NewPCG(7, 7)).Perm(len(frags)) {
		in := buf[:copy(buf, frags[i])]
		var err error
		if got, err = a.AddBytes(t0, in); err != nil {
			t.Fatal(err)
		}
		for j := range buf {
			buf[j] = 0xee
		}
	}
	if got == nil || !proto.Equal(got, n) {
		t.Fatalf("event corrupted by reuse of the input buffer")
	}
}

func TestAssemblerDropRecordsBounded(t *testing.T) {
	a := mustAssembler(t, Config{MaxPendingDrops: 2})
	bad := func(seq uint32) []byte {
		return reencode(t, mustAppendSplit(t, minimalEvent(6, seq, []byte("x")), 0)[0],
			func(f *rsbpb.FragmentedNotification) { f.DataPart = proto.Uint32(5) })
	}
	for i := range 5 {
		a.AddBytes(t0, bad(uint32(i)))
	}
	s := a.Stats()
	if got := a.AppendDrops(nil); len(got) != 2 || s.DropRecordsLost != 3 || s.Dropped[ReasonIndexOutOfRange] != 5 {
		t.Fatalf("drops %d, lost %d, counted %d", len(got), s.DropRecordsLost, s.Dropped[ReasonIndexOutOfRange])
	}
	a.AddBytes(t0, bad(5))
	if got := a.AppendDrops(make([]Drop, 0, 4)); len(got) != 1 {
		t.Fatalf("after draining: %d records", len(got))
	}
}
