package fragmentation

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// checkSplit splits n under maxSize both ways and checks the RSB fragment
// rules, the size bound, the packing and the round trip through an Assembler.
func checkSplit(t *testing.T, n *rsbpb.Notification, maxSize int) int {
	t.Helper()
	frags := mustAppendSplit(t, n, maxSize)
	msgs, err := Split(n, maxSize)
	if err != nil {
		t.Fatalf("Split: %v", err)
	}
	if len(msgs) != len(frags) {
		t.Fatalf("Split gave %d fragments, AppendSplit %d", len(msgs), len(frags))
	}
	total := len(frags)
	for i, b := range frags {
		if len(b) > maxSize {
			t.Fatalf("fragment %d/%d is %d bytes > %d", i, total, len(b), maxSize)
		}
		if proto.Size(msgs[i]) != len(b) || !bytes.Equal(mustMarshal(t, msgs[i]), b) {
			t.Fatalf("fragment %d: Split and AppendSplit serializations differ", i)
		}
		if i < total-1 && len(b) < maxSize-2*maxVarintLen32 {
			t.Fatalf("fragment %d/%d is %d bytes, wastes room under %d", i, total, len(b), maxSize)
		}
		checkFragmentFields(t, decodeFragment(t, b), n, i, total)
	}
	a := mustAssembler(t, Config{MaxFragmentSize: maxSize})
	got := feed(t, a, t0, frags, identity(total))
	if len(got) != 1 {
		t.Fatalf("%d events delivered, want 1", len(got))
	}
	if !bytes.Equal(mustMarshal(t, got[0]), mustMarshal(t, n)) {
		t.Fatalf("reassembled event differs from the original (max %d, data %d)", maxSize, len(n.Data))
	}
	return total
}

// checkFragmentFields checks one decoded fragment against the RSB rules.
func checkFragmentFields(t *testing.T, f *rsbpb.FragmentedNotification, n *rsbpb.Notification, i, total int) {
	t.Helper()
	if f.GetNumDataParts() != uint32(total) || f.GetDataPart() != uint32(i) {
		t.Fatalf("fragment %d: counters %d/%d, want %d/%d", i, f.GetDataPart(), f.GetNumDataParts(), i, total)
	}
	note := f.Notification
	if !proto.Equal(note.EventId, n.EventId) {
		t.Fatalf("fragment %d: event id %v", i, note.EventId)
	}
	if i == 0 {
		if !bytes.Equal(note.Scope, n.Scope) || !bytes.Equal(note.Method, n.Method) ||
			!proto.Equal(note.MetaData, n.MetaData) || len(note.Causes) != len(n.Causes) {
			t.Fatalf("fragment 0 lacks the header")
		}
		return
	}
	stripped := &rsbpb.Notification{EventId: note.EventId, Data: note.Data}
	if !proto.Equal(note, stripped) || len(note.Data) == 0 {
		t.Fatalf("fragment %d carries more than event id and data, or no data: %v", i, note)
	}
}

func TestSplitRoundTripSweep(t *testing.T) {
	for _, maxSize := range []int{41, 42, 47, 64, 97, 128, 129, 200} {
		t.Run(fmt.Sprintf("minimal/max%d", maxSize), func(t *testing.T) {
			for d := 0; d <= 3*maxSize; d++ {
				checkSplit(t, minimalEvent(1, uint32(d), payload(byte(d), d)), maxSize)
			}
		})
	}
	for _, maxSize := range []int{240, 256, 300, 1400, 1401} {
		t.Run(fmt.Sprintf("rich/max%d", maxSize), func(t *testing.T) {
			for d := 0; d <= 3*maxSize; d += 1 + d/200 {
				checkSplit(t, richEvent(2, uint32(d), payload(byte(d), d)), maxSize)
			}
		})
	}
}

// TestSplitBoundaries places the data size exactly where a fragment becomes
// full and where a varint (chunk length, fragment count, index) gains a byte.
func TestSplitBoundaries(t *testing.T) {
	n := richEvent(3, 9, nil)
	for _, maxSize := range []int{240, 300, 16384 + 200, DefaultMaxFragmentSize} {
		l, err := planLayout(proto.Size(n), protowire.SizeTag(fieldEventID)+protowire.SizeBytes(proto.Size(n.EventId)),
			1<<20, true, maxSize)
		if err != nil {
			t.Fatal(err)
		}
		single := l.first + 4 // around the largest single-fragment event
		var sizes []int
		for _, k := range []int{1, 2, 126, 127, 128, 129} {
			sizes = append(sizes, l.first+(k-1)*l.rest)
		}
		sizes = append(sizes, single)
		for _, s := range sizes {
			for d := max(0, s-6); d <= s+6; d++ {
				if d > 4<<20 {
					continue
				}
				n.Data = payload(byte(d), d)
				checkSplit(t, n, maxSize)
			}
		}
	}
}

// TestFitChunk checks that fitChunk finds the largest chunk for every budget,
// across the one-, two- and three-byte varint boundaries.
func TestFitChunk(t *testing.T) {
	for _, fixed := range []int{0, 23, 130, 16380} {
		for budget := 0; budget < 70000; budget++ {
			c := fitChunk(budget, fixed)
			if c < 0 {
				if framedSize(fixed, 0) <= budget {
					t.Fatalf("fixed %d budget %d: no chunk, but 0 fits", fixed, budget)
				}
				continue
			}
			if framedSize(fixed, c) > budget || framedSize(fixed, c+1) <= budget {
				t.Fatalf("fixed %d budget %d: chunk %d is not the largest fitting", fixed, budget, c)
			}
		}
	}
}

func TestSplitManyFragments(t *testing.T) {
	// Tiny fragments: thousands of parts, two-byte counters and indices.
	n := minimalEvent(4, 1, payload(4, 50000))
	if total := checkSplit(t, n, 48); total < 2000 {
		t.Fatalf("%d fragments, expected thousands", total)
	}
}

func TestSplitDataPresence(t *testing.T) {
	for _, data := range [][]byte{nil, {}} {
		n := richEvent(5, 2, data)
		frags := mustAppendSplit(t, n, 1000)
		if len(frags) != 1 {
			t.Fatalf("empty event gave %d fragments", len(frags))
		}
		a := mustAssembler(t, Config{})
		got := feed(t, a, t0, frags, []int{0})[0]
		if (got.Data == nil) != (data == nil) {
			t.Fatalf("data presence changed: got nil=%v want nil=%v", got.Data == nil, data == nil)
		}
		if !bytes.Equal(mustMarshal(t, got), mustMarshal(t, n)) {
			t.Fatalf("round trip differs")
		}
	}
}

func TestSplitKeepsUnknownFields(t *testing.T) {
	n := richEvent(6, 3, payload(6, 3000))
	var unknown []byte
	unknown = protowire.AppendTag(unknown, 500, protowire.BytesType)
	unknown = protowire.AppendBytes(unknown, []byte("future field"))
	n.ProtoReflect().SetUnknown(unknown)
	if total := checkSplit(t, n, 700); total < 5 {
		t.Fatalf("%d fragments", total)
	}
}

func TestSplitHeaderTooLarge(t *testing.T) {
	big := richEvent(7, 1, payload(7, 100))
	big.MetaData.UserInfos = append(big.MetaData.UserInfos,
		&rsbpb.UserInfo{Key: []byte("k"), Value: bytes.Repeat([]byte("v"), 500)})
	cases := []struct {
		name    string
		n       *rsbpb.Notification
		maxSize int
	}{
		{"header over size", big, 400},
		{"header leaves fewer than MinDataChunk bytes", big, proto.Size(big) - 100 + 4 + 5},
		{"empty event over size", richEvent(7, 2, nil), 60},
		{"event id does not fit", minimalEvent(7, 3, payload(7, 100)), 24},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Split(c.n, c.maxSize); !errors.Is(err, ErrHeaderTooLarge) {
				t.Fatalf("Split: %v, want ErrHeaderTooLarge", err)
			}
			dst := [][]byte{[]byte("kept")}
			out, err := AppendSplit(dst, c.n, c.maxSize)
			if !errors.Is(err, ErrHeaderTooLarge) || len(out) != 1 {
				t.Fatalf("AppendSplit: %v (len %d), want ErrHeaderTooLarge and dst unchanged", err, len(out))
			}
		})
	}
}

func TestSplitInvalidEventID(t *testing.T) {
	cases := map[string]*rsbpb.Notification{
		"nil notification": nil,
		"no event id":      {Scope: []byte("/")},
		"short sender":     {EventId: &rsbpb.EventId{SenderId: []byte{1, 2}, SequenceNumber: proto.Uint32(1)}},
		"no sequence":      {EventId: &rsbpb.EventId{SenderId: sender(1)}},
	}
	for name, n := range cases {
		if _, err := Split(n, 0); !errors.Is(err, ErrInvalidEventID) {
			t.Errorf("%s: Split: %v", name, err)
		}
		if _, err := AppendSplit(nil, n, 0); !errors.Is(err, ErrInvalidEventID) {
			t.Errorf("%s: AppendSplit: %v", name, err)
		}
	}
	if _, err := Split(minimalEvent(1, 1, nil), -1); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("negative size: %v", err)
	}
}

func TestSplitterLimits(t *testing.T) {
	s, err := NewSplitter(SplitConfig{MaxFragmentSize: 200, MaxEventSize: 1000, MaxParts: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendSplit(nil, minimalEvent(1, 1, payload(1, 1001))); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("over MaxEventSize: %v", err)
	}
	if _, err := s.Split(minimalEvent(1, 2, payload(1, 900))); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("over MaxParts: %v", err)
	}
	frags, err := s.AppendSplit(nil, minimalEvent(1, 3, payload(1, 600)))
	if err != nil || len(frags) > 4 {
		t.Fatalf("within limits: %d fragments, %v", len(frags), err)
	}
	// The Splitter reuses its header scratch: a second event must not see the
	// first one's header.
	if s, err = NewSplitter(SplitConfig{MaxFragmentSize: 400}); err != nil {
		t.Fatal(err)
	}
	a := richEvent(2, 1, payload(2, 700))
	b := minimalEvent(3, 2, payload(3, 700))
	fa, errA := s.AppendSplit(nil, a)
	fb, errB := s.AppendSplit(nil, b)
	if errA != nil || errB != nil {
		t.Fatalf("AppendSplit: %v, %v", errA, errB)
	}
	for _, c := range []struct {
		n     *rsbpb.Notification
		frags [][]byte
	}{{a, fa}, {b, fb}} {
		asm := mustAssembler(t, Config{})
		got := feed(t, asm, t0, c.frags, identity(len(c.frags)))
		if len(got) != 1 || !proto.Equal(got[0], c.n) {
			t.Fatalf("reused Splitter corrupted an event: got %v\nwant %v", got, c.n)
		}
	}
	if _, err := NewSplitter(SplitConfig{MaxParts: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("negative MaxParts: %v", err)
	}
	if got := s.Config().MaxFragmentSize; got != 400 {
		t.Fatalf("Config().MaxFragmentSize = %d", got)
	}
}

func TestSplitDefaultSize(t *testing.T) {
	n := richEvent(8, 1, payload(8, 3*DefaultMaxFragmentSize))
	frags := mustAppendSplit(t, n, 0)
	if len(frags) != 4 {
		t.Fatalf("%d fragments for 3 x the default size, want 4", len(frags))
	}
	for i, f := range frags {
		if len(f) > DefaultMaxFragmentSize {
			t.Fatalf("fragment %d is %d bytes", i, len(f))
		}
	}
}
