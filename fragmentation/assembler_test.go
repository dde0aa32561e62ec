package fragmentation

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// permutations calls fn with every ordering of 0..n-1.
func permutations(n int, fn func([]int)) {
	p := identity(n)
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			fn(p)
			return
		}
		for i := k; i < n; i++ {
			p[k], p[i] = p[i], p[k]
			rec(k + 1)
			p[k], p[i] = p[i], p[k]
		}
	}
	rec(0)
}

func TestAssemblerAllArrivalOrders(t *testing.T) {
	n := richEvent(1, 1, payload(1, 1000))
	want := mustMarshal(t, n)
	frags := mustAppendSplit(t, n, 260)
	if len(frags) != 6 {
		t.Fatalf("%d fragments, test wants 6", len(frags))
	}
	a := mustAssembler(t, Config{})
	permutations(len(frags), func(order []int) {
		for k, i := range order {
			got, err := a.AddBytes(t0, frags[i])
			if err != nil {
				t.Fatalf("order %v: %v", order, err)
			}
			if (got != nil) != (k == len(order)-1) {
				t.Fatalf("order %v: delivery after %d fragments", order, k+1)
			}
			if got != nil && !bytes.Equal(mustMarshal(t, got), want) {
				t.Fatalf("order %v: reassembled bytes differ", order)
			}
		}
		checkBounds(t, a)
		if a.Len() != 0 || a.BufferedBytes() != 0 {
			t.Fatalf("order %v: state left behind: %d partials, %d bytes", order, a.Len(), a.BufferedBytes())
		}
	})
	if s := a.Stats(); s.Delivered != 720 || s.TotalDropped() != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestAssemblerInterleaved feeds several large events, each in a random order,
// interleaved with each other and with single-fragment events.
func TestAssemblerInterleaved(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var events []*rsbpb.Notification
	var pending [][]byte
	for k := range 8 {
		n := richEvent(byte(k), uint32(k), payload(byte(k), 200+rng.IntN(20000)))
		events = append(events, n)
		pending = append(pending, mustAppendSplit(t, n, 1400)...)
	}
	rng.Shuffle(len(pending), func(i, j int) { pending[i], pending[j] = pending[j], pending[i] })
	a := mustAssembler(t, Config{})
	got := map[uint32][]byte{}
	for i, b := range pending {
		n, err := a.AddBytes(t0, b)
		if err != nil {
			t.Fatal(err)
		}
		if n != nil {
			got[n.EventId.GetSequenceNumber()] = mustMarshal(t, n)
		}
		small := minimalEvent(99, uint32(1000+i), payload(byte(i), 10))
		s, err := a.AddBytes(t0, mustAppendSplit(t, small, 1400)[0])
		if err != nil || !proto.Equal(s, small) {
			t.Fatalf("pass-through: %v", err)
		}
		checkBounds(t, a)
	}
	for k, n := range events {
		if !bytes.Equal(got[uint32(k)], mustMarshal(t, n)) {
			t.Fatalf("event %d not delivered intact", k)
		}
	}
}

func TestAssemblerAddMessages(t *testing.T) {
	n := richEvent(2, 5, payload(2, 5000))
	want := mustMarshal(t, n)
	msgs, err := Split(n, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// Decode copies, so Add may take ownership as documented.
	a := mustAssembler(t, Config{})
	for i := len(msgs) - 1; i >= 0; i-- {
		f := decodeFragment(t, mustMarshal(t, msgs[i]))
		got, err := a.Add(t0, f)
		if err != nil {
			t.Fatal(err)
		}
		if (got != nil) != (i == 0) {
			t.Fatalf("delivery at fragment %d", i)
		}
		if got != nil && !bytes.Equal(mustMarshal(t, got), want) {
			t.Fatalf("reassembled bytes differ")
		}
	}
	single := decodeFragment(t, mustAppendSplit(t, minimalEvent(3, 1, []byte("x")), 0)[0])
	if got, err := a.Add(t0, single); err != nil || got != single.Notification {
		t.Fatalf("pass-through must return the fragment's Notification: %v", err)
	}
	if _, err := a.Add(t0, nil); !errors.Is(err, ErrDecode) {
		t.Fatalf("nil fragment: %v", err)
	}
	if s := a.Stats(); s.Delivered != 2 || s.Unfragmented != 1 || s.Fragments != uint64(len(msgs)+2) {
		t.Fatalf("stats %+v", s)
	}
}

func TestAssemblerDuplicates(t *testing.T) {
	n := minimalEvent(4, 1, payload(4, 3000))
	frags := mustAppendSplit(t, n, 500)
	a := mustAssembler(t, Config{})
	order := []int{2, 0, 2, 0, 1}
	for _, i := range order[:4] {
		_, err := a.AddBytes(t0, frags[i])
		if err != nil {
			wantRefusal(t, err, ReasonDuplicate)
		}
	}
	got := feed(t, a, t0, frags, []int{1, 3, 4, 5, 6})
	if len(got) != 1 || !proto.Equal(got[0], n) {
		t.Fatalf("event not delivered after duplicates")
	}
	if _, err := a.AddBytes(t0, frags[3]); err != nil {
		// After completion the Assembler keeps no state: a late repeat starts
		// a new partial event (the stream receiver suppresses such repeats).
		t.Fatalf("late repeat: %v", err)
	}
	s := a.Stats()
	if s.Dropped[ReasonDuplicate] != 2 || s.Delivered != 1 {
		t.Fatalf("stats %+v", s)
	}
	if d := a.AppendDrops(nil); len(d) != 0 {
		t.Fatalf("duplicates made drop records: %+v", d)
	}
}

// refusalCase offers the first fragments, then a bad one, and expects the
// event to be dropped with reason.
func TestAssemblerInconsistentInput(t *testing.T) {
	n := richEvent(5, 77, payload(5, 3000))
	frags := mustAppendSplit(t, n, 500)
	total := uint32(len(frags))
	cases := []struct {
		name   string
		before []int
		bad    []byte
		reason Reason
	}{
		{"other count", []int{0, 1}, reencode(t, frags[2], func(f *rsbpb.FragmentedNotification) {
			f.NumDataParts = proto.Uint32(total + 1)
		}), ReasonInconsistentCount},
		{"unfragmented claim", []int{1}, reencode(t, frags[0], func(f *rsbpb.FragmentedNotification) {
			f.NumDataParts = proto.Uint32(1)
		}), ReasonInconsistentCount},
		{"index out of range", []int{0, 3}, reencode(t, frags[2], func(f *rsbpb.FragmentedNotification) {
			f.DataPart = proto.Uint32(total)
		}), ReasonIndexOutOfRange},
		{"fragment 0 without header", []int{2, 1}, reencode(t, frags[0], func(f *rsbpb.FragmentedNotification) {
			f.Notification.Scope = nil
		}), ReasonHeaderMissing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := mustAssembler(t, Config{})
			feed(t, a, t0, frags, c.before)
			_, err := a.AddBytes(t0, c.bad)
			wantRefusal(t, err, c.reason)
			drops := a.AppendDrops(nil)
			want := Drop{SenderID: [16]byte(sender(5)), SequenceNumber: 77, Reason: c.reason,
				Received: uint32(len(c.before)), Total: total}
			if len(drops) != 1 || drops[0].Bytes <= 0 {
				t.Fatalf("drops %+v", drops)
			}
			want.Bytes = drops[0].Bytes
			if drops[0] != want {
				t.Fatalf("drop %+v, want %+v", drops[0], want)
			}
			if a.Len() != 0 || a.BufferedBytes() != 0 || a.Stats().Dropped[c.reason] != 1 {
				t.Fatalf("partial kept: len %d bytes %d stats %+v", a.Len(), a.BufferedBytes(), a.Stats())
			}
		})
	}
}

func TestAssemblerLoneRefusals(t *testing.T) {
	n := minimalEvent(6, 3, payload(6, 100))
	single := mustAppendSplit(t, n, 0)[0]
	cases := []struct {
		name   string
		cfg    Config
		b      []byte
		reason Reason
	}{
		{"index out of range", Config{}, reencode(t, single, func(f *rsbpb.FragmentedNotification) {
			f.DataPart = proto.Uint32(1)
		}), ReasonIndexOutOfRange},
		{"zero parts", Config{}, reencode(t, single, func(f *rsbpb.FragmentedNotification) {
			f.NumDataParts = proto.Uint32(0)
		}), ReasonIndexOutOfRange},
		{"too many parts", Config{MaxParts: 100}, reencode(t, single, func(f *rsbpb.FragmentedNotification) {
			f.NumDataParts = proto.Uint32(101)
		}), ReasonTooManyParts},
		{"too many parts, uint32 max", Config{}, reencode(t, single, func(f *rsbpb.FragmentedNotification) {
			f.NumDataParts = proto.Uint32(1<<32 - 1)
		}), ReasonTooManyParts},
		{"single too large", Config{MaxEventSize: 99, MaxBufferedBytes: 1000}, single, ReasonEventTooLarge},
		{"no header", Config{}, reencode(t, single, func(f *rsbpb.FragmentedNotification) {
			f.Notification.Scope = nil
		}), ReasonHeaderMissing},
		{"short sender id", Config{}, reencode(t, single, func(f *rsbpb.FragmentedNotification) {
			f.Notification.EventId.SenderId = []byte{1, 2, 3}
		}), ReasonBadEventID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := mustAssembler(t, c.cfg)
			got, err := a.AddBytes(t0, c.b)
			if got != nil {
				t.Fatalf("delivered a refused fragment")
			}
			wantRefusal(t, err, c.reason)
			drops := a.AppendDrops(nil)
			if len(drops) != 1 || drops[0].Reason != c.reason || drops[0].SequenceNumber != 3 || drops[0].Received != 0 {
				t.Fatalf("drops %+v", drops)
			}
			if a.Len() != 0 || a.BufferedBytes() != 0 || a.Stats().Dropped[c.reason] != 1 {
				t.Fatalf("state after refusal: %d partials, %d bytes", a.Len(), a.BufferedBytes())
			}
		})
	}
}

func TestAssemblerDecodeErrors(t *testing.T) {
	good := mustAppendSplit(t, minimalEvent(7, 1, payload(7, 3000)), 500)
	cases := map[string][]byte{
		"empty":          {},
		"garbage":        []byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"),
		"truncated":      good[1][:len(good[1])-1],
		"cut in data":    good[2][:100],
		"no counters":    good[1][:len(good[1])-4],
		"oversized":      append(bytes.Repeat([]byte{0}, 600), good[1]...),
		"bad field 0":    {0x00, 0x01},
		"bad end group":  {0x0c},
		"no event id":    {0x0a, 0x02, 0x4a, 0x00, 0x10, 0x02, 0x18, 0x01},
		"no sequence":    {0x0a, 0x06, 0xe2, 0x06, 0x03, 0x0a, 0x01, 0x41, 0x10, 0x02, 0x18, 0x01},
		"bad wire count": {0x0a, 0x00, 0x10, 0x02},
	}
	a := mustAssembler(t, Config{MaxFragmentSize: 500})
	for name, b := range cases {
		got, err := a.AddBytes(t0, b)
		if got != nil {
			t.Fatalf("%s: delivered", name)
		}
		wantRefusal(t, err, ReasonDecode)
	}
	if s := a.Stats(); s.Dropped[ReasonDecode] != uint64(len(cases)) {
		t.Fatalf("decode drops %d, want %d", s.Dropped[ReasonDecode], len(cases))
	}
	if d := a.AppendDrops(nil); len(d) != 0 {
		t.Fatalf("decode failures made drop records: %+v", d)
	}
}

// TestAddBytesMergedNotification splits fragment 0's Notification into two
// occurrences of field 1, which protobuf merges; AddBytes must agree.
func TestAddBytesMergedNotification(t *testing.T) {
	n := richEvent(8, 2, payload(8, 50))
	first := mustMarshal(t, &rsbpb.Notification{EventId: n.EventId, Scope: n.Scope})
	rest, err := proto.MarshalOptions{AllowPartial: true}.Marshal(&rsbpb.Notification{
		Method: n.Method, WireSchema: n.WireSchema, Data: n.Data, Causes: n.Causes, MetaData: n.MetaData})
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	for _, part := range [][]byte{first, rest} {
		b = append(b, 0x0a)
		b = appendVarint(b, len(part))
		b = append(b, part...)
	}
	b = append(b, 0x10, 0x01, 0x18, 0x00)
	a := mustAssembler(t, Config{})
	got, err := a.AddBytes(t0, b)
	if err != nil || !proto.Equal(got, n) {
		t.Fatalf("merged notification: %v", err)
	}
}

func appendVarint(b []byte, v int) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func TestAssemblerTimeout(t *testing.T) {
	cfg := Config{Timeout: 5 * time.Second}
	a := mustAssembler(t, cfg)
	frags := mustAppendSplit(t, minimalEvent(9, 1, payload(9, 3000)), 500)
	other := mustAppendSplit(t, minimalEvent(9, 2, payload(9, 3000)), 500)
	feed(t, a, t0, frags, []int{0, 1})
	feed(t, a, t0.Add(time.Second), other, []int{0})
	if d, ok := a.NextDeadline(); !ok || !d.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("NextDeadline = %v, %v", d, ok)
	}
	a.Prune(t0.Add(5*time.Second - 1))
	if a.Len() != 2 {
		t.Fatalf("pruned before the deadline")
	}
	a.Prune(t0.Add(5 * time.Second))
	drops := a.AppendDrops(nil)
	if a.Len() != 1 || len(drops) != 1 || drops[0].Reason != ReasonTimeout || drops[0].SequenceNumber != 1 ||
		drops[0].Received != 2 {
		t.Fatalf("after prune: %d partials, drops %+v", a.Len(), drops)
	}
	// The second event expires lazily when its next fragment arrives late;
	// that fragment, which can no longer complete it, is refused, as are
	// the later fragments of the first event.
	late := t0.Add(7 * time.Second)
	if _, err := a.AddBytes(late, other[1]); ReasonOf(err) != ReasonAfterDrop {
		t.Fatalf("late fragment of an expired event: %v", err)
	}
	drops = a.AppendDrops(nil)
	if len(drops) != 1 || drops[0].Reason != ReasonTimeout || drops[0].SequenceNumber != 2 || a.Len() != 0 {
		t.Fatalf("lazy expiry: drops %+v, %d partials", drops, a.Len())
	}
	for _, f := range frags[2:] {
		if _, err := a.AddBytes(late, f); ReasonOf(err) != ReasonAfterDrop || !errors.Is(err, ErrDropped) {
			t.Fatalf("fragment of a pruned event: %v", err)
		}
	}
	if _, ok := a.NextDeadline(); ok || a.Len() != 0 || a.BufferedBytes() != 0 || len(a.AppendDrops(nil)) != 0 {
		t.Fatalf("state left after the refused fragments")
	}
	s := a.Stats()
	if s.Dropped[ReasonTimeout] != 2 || s.Dropped[ReasonAfterDrop] != uint64(1+len(frags)-2) {
		t.Fatalf("timeouts %d, after drop %d", s.Dropped[ReasonTimeout], s.Dropped[ReasonAfterDrop])
	}
}

// TestAssemblerForgetsOldDrops: the dropped events remembered are bounded
// by MaxRememberedDrops; a fragment of one forgotten starts a partial event
// again.
func TestAssemblerForgetsOldDrops(t *testing.T) {
	a := mustAssembler(t, Config{MaxRememberedDrops: 2, Timeout: time.Second})
	var events [3][][]byte
	for i := range events {
		events[i] = mustAppendSplit(t, minimalEvent(4, uint32(i), payload(4, 1000)), 300)
		feed(t, a, t0, events[i], []int{0})
	}
	a.Prune(t0.Add(time.Second)) // drops all three, oldest first
	if got := len(a.AppendDrops(nil)); got != 3 {
		t.Fatalf("%d drops", got)
	}
	for i := 1; i < 3; i++ {
		if _, err := a.AddBytes(t0.Add(time.Second), events[i][1]); ReasonOf(err) != ReasonAfterDrop {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	if _, err := a.AddBytes(t0.Add(time.Second), events[0][1]); err != nil || a.Len() != 1 {
		t.Fatalf("forgotten event 0: %v, %d partials", err, a.Len())
	}
	if s, q, ok := a.LastEventID(); !ok || s != [16]byte(sender(4)) || q != 0 {
		t.Fatalf("LastEventID = %x, %d, %v", s, q, ok)
	}
	if _, err := a.AddBytes(t0, []byte{0xff}); ReasonOf(err) != ReasonDecode {
		t.Fatalf("garbage: %v", err)
	}
	if _, _, ok := a.LastEventID(); ok {
		t.Fatal("LastEventID names an event after a fragment that did not decode")
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := []Config{
		{MaxEventSize: -1},
		{Timeout: -time.Second},
		{MaxBufferedBytes: 1000},
		{MaxEventSize: 2000, MaxBufferedBytes: 1000},
		{MaxParts: 1 << 33},
	}
	for _, c := range bad {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v", c, err)
		}
		if _, err := NewAssembler(c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewAssembler(%+v): %v", c, err)
		}
	}
	if err := (SplitConfig{MaxParts: 1 << 33}).Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("SplitConfig: %v", err)
	}
	a := mustAssembler(t, Config{MaxPartialEvents: 3})
	if c := a.Config(); c.MaxPartialEvents != 3 || c.MaxEventSize != DefaultMaxEventSize || c.Timeout != DefaultTimeout {
		t.Fatalf("defaults not filled: %+v", c)
	}
}

func TestReasonString(t *testing.T) {
	seen := map[string]bool{}
	for r := Reason(1); int(r) < NumReasons; r++ {
		s := r.String()
		if s == "" || seen[s] || bytes.HasPrefix([]byte(s), []byte("reason(")) {
			t.Fatalf("reason %d has name %q", r, s)
		}
		seen[s] = true
	}
	if got := Reason(200).String(); got != "reason(200)" {
		t.Fatalf("unknown reason: %q", got)
	}
	if ReasonOf(errors.New("x")) != 0 || ReasonOf(nil) != 0 {
		t.Fatalf("ReasonOf of a foreign error")
	}
}
