package node

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb"
)

// TestMarshalWhole: the one-buffer publish encoding equals the Notification
// wrapped by appendWhole, and unwrapWhole gets the Notification back.
func TestMarshalWhole(t *testing.T) {
	ev := testEvent("/rec/", 7, bytes.Repeat([]byte("r"), 300))
	ev.Method = "REQUEST"
	record, body, err := marshalWhole(ev)
	if err != nil {
		t.Fatal(err)
	}
	want, err := notification.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want) || !bytes.Equal(record, appendWhole(nil, want)) {
		t.Fatal("marshalWhole differs from Marshal + appendWhole")
	}
	got, whole, err := unwrapWhole(record)
	if err != nil || !whole || !bytes.Equal(got, want) {
		t.Fatalf("unwrapWhole: whole=%v err=%v", whole, err)
	}
	if _, _, err := marshalWhole(&notification.Event{}); err == nil {
		t.Fatal("event without scope accepted")
	}
}

// FuzzUnwrapWhole: unwrapping any record never panics and agrees with the
// generated decoder on whether it is an unfragmented event.
func FuzzUnwrapWhole(f *testing.F) {
	ev := testEvent("/f/", 1, []byte("x"))
	_, body, _ := marshalWhole(ev)
	f.Add(appendWhole(nil, body))
	frags, _ := splitRaw(nil, append([]byte(nil), body...), 60)
	for _, fr := range frags {
		f.Add(fr)
	}
	f.Add([]byte{0x0a})
	f.Fuzz(func(t *testing.T, rec []byte) {
		n, whole, err := unwrapWhole(rec)
		if err != nil {
			return
		}
		var fn rsbpb.FragmentedNotification
		if proto.Unmarshal(rec, &fn) != nil {
			return // the generated decoder also checks the inner message
		}
		if whole != (fn.GetNumDataParts() == 1 && fn.GetDataPart() == 0) {
			t.Fatalf("whole=%v, parts %d part %d", whole, fn.GetNumDataParts(), fn.GetDataPart())
		}
		inner, _ := proto.Marshal(fn.GetNotification())
		var a, b rsbpb.Notification
		if proto.Unmarshal(n, &a) != nil || proto.Unmarshal(inner, &b) != nil || !proto.Equal(&a, &b) {
			t.Fatal("unwrapped notification differs")
		}
	})
}

// TestAllocRecordSlabs: carved records never overlap, have the capacity
// asked for (so appending past it reallocates) and share slabs.
func TestAllocRecordSlabs(t *testing.T) {
	var bufs [][]byte
	for i := range 200 {
		n := 1 + i*37%maxSlabRecord
		b := allocRecord(n)
		if len(b) != 0 || cap(b) != n {
			t.Fatalf("record %d: len %d cap %d, want 0 and %d", i, len(b), cap(b), n)
		}
		b = append(b, bytes.Repeat([]byte{byte(i)}, n)...)
		bufs = append(bufs, b)
	}
	for i, b := range bufs {
		if !bytes.Equal(b, bytes.Repeat([]byte{byte(i)}, len(b))) {
			t.Fatalf("record %d was overwritten by a later one", i)
		}
	}
	if b := allocRecord(maxSlabRecord + 1); cap(b) != maxSlabRecord+1 {
		t.Fatalf("large record: cap %d", cap(b))
	}
	if a := testing.AllocsPerRun(1000, func() { allocRecord(1100) }); a > 0.1 {
		t.Fatalf("%v allocations per small record", a)
	}
}
