package fragmentation

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// fuzzDecodeConfig keeps the fuzzed Assembler small so its bounds are hit.
var fuzzDecodeConfig = Config{
	MaxEventSize:     1 << 15,
	MaxFragmentSize:  4096,
	MaxParts:         64,
	MaxPartialEvents: 4,
	MaxBufferedBytes: 1 << 16,
	Timeout:          time.Second,
	MaxPendingDrops:  16,
}

// fuzzRecords cuts input into records: first the whole input, then a
// sequence of 2-byte big-endian lengths each followed by that many bytes.
func fuzzRecords(data []byte) [][]byte {
	recs := [][]byte{data}
	for len(data) >= 2 {
		n := min(int(data[0])<<8|int(data[1]), len(data)-2)
		recs = append(recs, data[2:2+n])
		data = data[2+n:]
	}
	return recs
}

// frameRecords builds a fuzz input from records (the inverse of fuzzRecords
// for everything after the first record).
func frameRecords(recs ...[]byte) []byte {
	var out []byte
	for _, r := range recs {
		out = append(out, byte(len(r)>>8), byte(len(r)))
		out = append(out, r...)
	}
	return out
}

func addDecodeSeeds(f *testing.F) {
	rich := mustAppendSplit(f, richEvent(1, 1, payload(1, 900)), 300)
	small := mustAppendSplit(f, minimalEvent(2, 2, payload(2, 20)), 0)
	f.Add(small[0])
	f.Add(rich[0])
	f.Add(rich[1])
	f.Add(frameRecords(rich...))
	f.Add(frameRecords(rich[3], rich[1], rich[0], rich[1], rich[2], small[0]))
	f.Add(frameRecords(rich[0], reencode(f, rich[1], func(m *rsbpb.FragmentedNotification) {
		m.NumDataParts = proto.Uint32(9)
	})))
	f.Add(frameRecords(rich[2][:len(rich[2])-1], reencode(f, rich[1], func(m *rsbpb.FragmentedNotification) {
		m.DataPart = proto.Uint32(1000)
	})))
	// A later fragment whose event_id field is repeated (protobuf merges it).
	dup := append([]byte(nil), rich[1]...)
	f.Add(append(dup, 0x0a, 0x07, 0xe2, 0x06, 0x04, 0x10, 0x01, 0x10, 0x01))
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x00, 0x10, 0x02, 0x18, 0x01})
	for _, s := range oddEncodings(f, rich) {
		f.Add(s)
	}
}

// oddEncodings returns valid encodings of fragments that protobuf reads in
// ways a hand-written parser may miss: counters wider than 32 bits (kept
// modulo 2^32), a repeated data field (the last wins), a field with the
// wrong wire type (an unknown field), fields out of order.
func oddEncodings(tb testing.TB, rich [][]byte) [][]byte {
	f1 := decodeFragment(tb, rich[1])
	id := mustMarshal(tb, f1.Notification.EventId)
	var note []byte
	note = protowire.AppendTag(note, fieldData, protowire.BytesType)
	note = protowire.AppendBytes(note, []byte("overwritten"))
	note = protowire.AppendTag(note, fieldEventID, protowire.BytesType)
	note = protowire.AppendBytes(note, id)
	note = protowire.AppendTag(note, fieldData, protowire.BytesType)
	note = protowire.AppendBytes(note, f1.Notification.Data)
	var b []byte
	b = protowire.AppendTag(b, fieldDataPart, protowire.VarintType)
	b = protowire.AppendVarint(b, 1<<32+1)
	b = protowire.AppendTag(b, fieldNotification, protowire.VarintType)
	b = protowire.AppendVarint(b, 7)
	b = protowire.AppendTag(b, fieldNotification, protowire.BytesType)
	b = protowire.AppendBytes(b, note)
	b = protowire.AppendTag(b, fieldNumDataParts, protowire.VarintType)
	b = protowire.AppendVarint(b, 1<<33+uint64(len(rich)))
	wide := protowire.AppendTag(append([]byte(nil), rich[2]...), fieldNumDataParts, protowire.VarintType)
	wide = protowire.AppendVarint(wide, 1<<40+uint64(len(rich)))
	return [][]byte{b, frameRecords(rich[0], b, wide, rich[3])}
}

// FuzzFragmentedNotificationDecode feeds arbitrary bytes to AddBytes. It must
// never panic or exceed its bounds, every event it delivers must serialize
// again, and wherever protobuf itself decodes the input, AddBytes must agree
// with Add on the decoded message.
func FuzzFragmentedNotificationDecode(f *testing.F) {
	addDecodeSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fast := mustAssembler(t, fuzzDecodeConfig)
		ref := mustAssembler(t, fuzzDecodeConfig)
		diverged := false
		now := t0
		for i, rec := range fuzzRecords(data) {
			now = now.Add(100 * time.Millisecond)
			got, err := fast.AddBytes(now, rec)
			checkDelivered(t, got)
			checkBounds(t, fast)
			if diverged {
				continue
			}
			m := new(rsbpb.FragmentedNotification)
			if len(rec) > fuzzDecodeConfig.MaxFragmentSize || proto.Unmarshal(rec, m) != nil {
				// protobuf refuses; AddBytes may accept fields it skips.
				diverged = !errors.Is(err, ErrDecode)
				continue
			}
			want, wantErr := ref.Add(now, m)
			if ReasonOf(err) != ReasonOf(wantErr) || (got == nil) != (want == nil) {
				t.Fatalf("record %d: AddBytes gave (%v, %v), Add gave (%v, %v)", i, got != nil, err, want != nil, wantErr)
			}
			if got != nil && !bytes.Equal(mustMarshal(t, got), mustMarshal(t, want)) {
				t.Fatalf("record %d: AddBytes and Add delivered different events", i)
			}
		}
		fast.Prune(now.Add(time.Hour))
		if fast.Len() != 0 || fast.BufferedBytes() != 0 {
			t.Fatalf("state left after pruning: %d, %d", fast.Len(), fast.BufferedBytes())
		}
	})
}

// checkDelivered checks that a delivered event is complete and serializable.
func checkDelivered(t *testing.T, n *rsbpb.Notification) {
	t.Helper()
	if n == nil {
		return
	}
	if len(n.GetScope()) == 0 || len(n.GetEventId().GetSenderId()) != senderIDSize {
		t.Fatalf("delivered event without scope or event id: %v", n)
	}
	if _, err := proto.Marshal(n); err != nil {
		t.Fatalf("delivered event does not serialize: %v", err)
	}
}

// TestOddEncodings checks that the odd encodings decode to the fragments
// they stand for, so the decode fuzzer's seeds cover those paths.
func TestOddEncodings(t *testing.T) {
	n := richEvent(1, 1, payload(1, 900))
	rich := mustAppendSplit(t, n, 300)
	odd := oddEncodings(t, rich)
	m := decodeFragment(t, odd[0])
	if m.GetDataPart() != 1 || m.GetNumDataParts() != uint32(len(rich)) ||
		!bytes.Equal(m.Notification.Data, decodeFragment(t, rich[1]).Notification.Data) {
		t.Fatalf("odd encoding decodes to %v", m)
	}
	a := mustAssembler(t, Config{})
	var got *rsbpb.Notification
	for _, b := range [][]byte{rich[0], odd[0], rich[2], rich[3]} {
		var err error
		if got, err = a.AddBytes(t0, b); err != nil {
			t.Fatal(err)
		}
	}
	if len(rich) != 4 || got == nil || !proto.Equal(got, n) {
		t.Fatalf("odd encodings did not reassemble (%d fragments)", len(rich))
	}
}
