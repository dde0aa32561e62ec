package node

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
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
// generated decoder on whether it is an unfragmented event and on its
// Notification; a record that repeats its notification field is left to
// the assembler, whose decoder merges the occurrences as protobuf does.
func FuzzUnwrapWhole(f *testing.F) {
	ev := testEvent("/f/", 1, []byte("x"))
	_, body, _ := marshalWhole(ev)
	f.Add(appendWhole(nil, body))
	frags, _ := splitRaw(nil, append([]byte(nil), body...), 60)
	for _, fr := range frags {
		f.Add(fr)
	}
	f.Add([]byte{0x0a})
	f.Add(append(appendWhole(nil, body), 0x0a, 0x00))
	f.Fuzz(func(t *testing.T, rec []byte) {
		n, whole, err := unwrapWhole(rec)
		if err != nil {
			return
		}
		var fn rsbpb.FragmentedNotification
		if proto.Unmarshal(rec, &fn) != nil {
			return // the generated decoder also checks the inner message
		}
		single := fn.GetNumDataParts() == 1 && fn.GetDataPart() == 0
		if whole != (single && notificationFields(rec) == 1) {
			t.Fatalf("whole=%v, parts %d part %d, %d notification fields", whole, fn.GetNumDataParts(), fn.GetDataPart(), notificationFields(rec))
		}
		if !whole {
			return
		}
		inner, _ := proto.Marshal(fn.GetNotification())
		var a, b rsbpb.Notification
		if proto.Unmarshal(n, &a) != nil || proto.Unmarshal(inner, &b) != nil || !proto.Equal(&a, &b) {
			t.Fatal("unwrapped notification differs")
		}
	})
}

// notificationFields counts the notification fields (1, bytes) of a
// FragmentedNotification record.
func notificationFields(rec []byte) int {
	count := 0
	for b := rec; len(b) > 0; {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return count
		}
		vl := protowire.ConsumeFieldValue(num, typ, b[l:])
		if vl < 0 {
			return count
		}
		if num == 1 && typ == protowire.BytesType {
			count++
		}
		b = b[l+vl:]
	}
	return count
}

// TestRepeatedNotificationFieldMerges: a whole record that repeats its
// notification field (protobuf merges the two) is not taken as a plain
// record, and the assembler delivers the merged event.
func TestRepeatedNotificationFieldMerges(t *testing.T) {
	ev := testEvent("/rec/merge/", 3, []byte("payload"))
	record, _, err := marshalWhole(ev)
	if err != nil {
		t.Fatal(err)
	}
	var extra rsbpb.Notification
	extra.Method = []byte("REPLY")
	more, err := proto.MarshalOptions{AllowPartial: true}.Marshal(&extra)
	if err != nil {
		t.Fatal(err)
	}
	rec := protowire.AppendBytes(protowire.AppendTag(append([]byte(nil), record...), 1, protowire.BytesType), more)
	if _, whole, err := unwrapWhole(rec); err != nil || whole {
		t.Fatalf("unwrapWhole: whole=%v err=%v, want a record for the assembler", whole, err)
	}
	var want rsbpb.FragmentedNotification
	if err := proto.Unmarshal(rec, &want); err != nil {
		t.Fatal(err)
	}
	asm, err := fragmentation.NewAssembler(fragmentation.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := asm.AddBytes(time.Now(), rec)
	if err != nil || got == nil {
		t.Fatalf("assembler: %v, %v", got, err)
	}
	if !proto.Equal(got, want.GetNotification()) || string(got.GetMethod()) != "REPLY" || string(got.GetData()) != "payload" {
		t.Fatalf("assembled %v, want the merged %v", got, want.GetNotification())
	}
}

// TestAllocRecordSlabs: carved records never overlap, have the capacity
// asked for (so appending past it reallocates) and share slabs.
func TestAllocRecordSlabs(t *testing.T) {
	var slabs recordSlabs
	var bufs [][]byte
	for i := range 200 {
		n := 1 + i*37%maxSlabRecord
		b, _ := slabs.alloc(n)
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
	if b, owner := slabs.alloc(maxSlabRecord + 1); cap(b) != maxSlabRecord+1 || owner != nil {
		t.Fatalf("large record: cap %d, owner %v", cap(b), owner)
	}
	if a := testing.AllocsPerRun(1000, func() { slabs.alloc(1100) }); a > 0.1 {
		t.Fatalf("%v allocations per small record", a)
	}
}

// TestWrapFrameInPlace: a frame the socket server read with wholeRoom is
// wrapped in place into exactly appendWhole's bytes, across the sizes
// where the length prefix grows (1, 2 and 3 bytes of varint), and the body
// the frame shares with the connections it was relayed to is unchanged.
func TestWrapFrameInPlace(t *testing.T) {
	type wrapped struct{ body, rec []byte }
	got := make(chan wrapped, 16)
	srv, err := rsbsocket.NewServer(rsbsocket.Config{FrameRoom: wholeRoom}, rsbsocket.HandlerFunc(func(_ rsbsocket.ConnID, f frame.Frame) {
		body := bytes.Clone(f.Body)
		got <- wrapped{body: body, rec: wrapFrame(&f)}
	}))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := sockclient.Dial(ctx, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, size := range []int{0, 60, 70, 16000, 16400, 59000} {
		body, err := notification.Marshal(testEvent("/wrap/", uint32(size), make([]byte, size)))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Send(body); err != nil {
			t.Fatal(err)
		}
		select {
		case w := <-got:
			if !bytes.Equal(w.body, body) || !bytes.Equal(w.rec, appendWhole(nil, body)) {
				t.Fatalf("%d-byte body: record of %d bytes differs from appendWhole's %d", len(body), len(w.rec), wholeSize(len(body)))
			}
		case <-ctx.Done():
			t.Fatal("frame not handled")
		}
	}
}
