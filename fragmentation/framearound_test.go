package fragmentation

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
)

// roomFor puts data into a buffer with the assemblers' room around it, as
// Config.Room lays it out, and returns the buffer and the
// data within it.
func roomFor(data []byte) (room, inRoom []byte) {
	room = bytes.Repeat([]byte{0xee}, reasmHead+len(data)+reasmTail) // stale bytes
	inRoom = room[reasmHead : reasmHead+len(data) : reasmHead+len(data)]
	copy(inRoom, data)
	return room, inRoom
}

// TestFrameAround: a reassembled event serialized around its data in its
// buffer is byte for byte what deterministic proto.Marshal gives, for a
// bare event and one with every field; fields out of order, too many to
// fit, empty data or no room make it decline (nil) without touching the
// data.
func TestFrameAround(t *testing.T) {
	data := bytes.Repeat([]byte("d"), 70000)
	rich := testutil.Event("/a/b/", 3, data)
	rich.Method = "REPLY"
	rich.MetaData.CreateTime, rich.MetaData.SendTime = 1, 2
	rich.MetaData.UserInfos = []notification.UserInfo{{Key: "k", Value: "v"}}
	rich.Causes = []notification.EventID{{SenderID: [16]byte{9}, SequenceNumber: 4}}
	for name, ev := range map[string]*notification.Event{"bare": testutil.Event("/x/", 1, data), "rich": rich} {
		m := notification.ToNotification(ev)
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		room, inRoom := roomFor(data)
		m.Data = inRoom
		got := FrameAround(m, room, reasmHead)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: %d bytes in place, Marshal gives %d", name, len(got), len(want))
		}
		if &got[len(got)-1] == &want[len(want)-1] || cap(got) != len(got) {
			t.Fatalf("%s: frame not in the room, or with capacity past it", name)
		}
	}

	m := notification.ToNotification(testutil.Event("/x/", 1, data))
	room, inRoom := roomFor(data)
	m.Data = inRoom
	m.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 1))
	if FrameAround(m, room, reasmHead) != nil {
		t.Fatal("an unknown field numbered below data's, which Marshal writes last, was placed before the data")
	}
	long := testutil.Event("/x/", 1, data)
	long.Method = strings.Repeat("M", reasmTail) // written after the data
	huge := notification.ToNotification(long)
	room, inRoom = roomFor(data)
	huge.Data = inRoom
	if FrameAround(huge, room, reasmHead) != nil {
		t.Fatal("fields past the tail room were written")
	}
	if !bytes.Equal(room[reasmHead:reasmHead+len(data)], data) {
		t.Fatal("a declined frame changed the data")
	}
	if FrameAround(m, nil, reasmHead) != nil {
		t.Fatal("framed without room")
	}
	empty := notification.ToNotification(testutil.Event("/x/", 1, nil))
	if FrameAround(empty, make([]byte, reasmHead+reasmTail), reasmHead) != nil {
		t.Fatal("framed an event without data")
	}
}
