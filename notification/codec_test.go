package notification

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rsbd/rsbd/scope"
)

func TestPythonFrame(t *testing.T) {
	frame := unhex(t, pythonFrameHex)
	if len(frame) != 80 {
		t.Fatalf("frame has %d bytes, want 80", len(frame))
	}
	want := &Event{
		Scope:      scope.MustParse("/example/sub/"),
		WireSchema: "utf-8-string",
		Data:       []byte("hello0"),
		ID:         EventID{SenderID: mustUUID("5586fd91-901f-4658-90e1-25a8bfac521a")},
		MetaData:   MetaData{CreateTime: 1796021956246876, SendTime: 1796021956246921},
	}
	for name, decode := range map[string]func([]byte) (*Event, error){
		"hand": DecodeNotification, "generated": unmarshalGenerated,
	} {
		e, err := decode(frame)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !e.Equal(want) {
			t.Fatalf("%s: decoded %+v, want %+v", name, e, want)
		}
		if e.Present != HasWireSchema|HasData|HasMetaData {
			t.Errorf("%s: Present = %06b", name, e.Present)
		}
		checkReencode(t, e, frame)
	}
}

func TestRPCErrorReply(t *testing.T) {
	frame := unhex(t, rpcErrorReplyHex)
	if len(frame) != 127 {
		t.Fatalf("frame has %d bytes, want 127", len(frame))
	}
	e, err := Unmarshal(frame)
	if err != nil {
		t.Fatal(err)
	}
	if e.Method != "REPLY" || len(e.Causes) != 1 || e.Causes[0].SenderID != mustUUID("d8fbfef4-4eb0-4c89-9716-c425ded3c527") {
		t.Fatalf("decoded %+v", e)
	}
	if v, ok := e.MetaData.UserInfo("rsb:error?"); !ok || v != "1" {
		t.Fatalf("user info rsb:error? = %q, %v", v, ok)
	}
	if string(e.Data) != "boom x" || e.ID.SenderID != mustUUID("bf948d47-618f-4b04-aac5-0ab5a1a79267") {
		t.Fatalf("decoded %+v", e)
	}
	checkReencode(t, e, frame)
}

// checkReencode checks that both encoders turn e into want.
func checkReencode(t *testing.T, e *Event, want []byte) {
	t.Helper()
	if got, err := Marshal(e); err != nil || !bytes.Equal(got, want) {
		t.Errorf("Marshal = % x, %v\nwant      % x", got, err, want)
	}
	if got, err := marshalGenerated(e); err != nil || !bytes.Equal(got, want) {
		t.Errorf("generated = % x, %v\nwant        % x", got, err, want)
	}
	if n := NotificationSize(e); n != len(want) {
		t.Errorf("NotificationSize = %d, want %d", n, len(want))
	}
	prefix := []byte("xyz")
	if got := AppendNotification(prefix, e); !bytes.Equal(got[:3], prefix) || !bytes.Equal(got[3:], want) {
		t.Errorf("AppendNotification to a prefix = % x", got)
	}
	for _, size := range []int{len(want) - 1, len(want) + 1} {
		if !panics(func() { AppendNotificationSized(nil, e, size) }) {
			t.Errorf("AppendNotificationSized with size %d of %d did not panic", size, len(want))
		}
	}
}

// panics reports whether fn panics.
func panics(fn func()) (did bool) {
	defer func() { did = recover() != nil }()
	fn()
	return false
}

const idHex = `e2 06 14 0a 10 55 86 fd 91 90 1f 46 58 90 e1 25 a8 bf ac 52 1a 10 07`

func presenceEvent(mod func(e *Event)) *Event {
	e := &Event{Scope: scope.MustParse("/a/"), ID: EventID{
		SenderID: mustUUID("5586fd91-901f-4658-90e1-25a8bfac521a"), SequenceNumber: 7}}
	mod(e)
	return e
}

func TestPresence(t *testing.T) {
	tests := []struct {
		name string
		e    *Event
		hex  string
	}{
		{"nothing optional", presenceEvent(func(e *Event) {}), `32 03 "/a/" ` + idHex},
		{"empty method", presenceEvent(func(e *Event) { e.Present = HasMethod }), `32 03 "/a/" 72 00 ` + idHex},
		{"method", presenceEvent(func(e *Event) { e.Method = "REQUEST" }), `32 03 "/a/" 72 07 "REQUEST" ` + idHex},
		{"empty data", presenceEvent(func(e *Event) { e.Present = HasData; e.WireSchema = "void" }),
			`32 03 "/a/" 3a 04 "void" 4a 00 ` + idHex},
		{"empty wire schema", presenceEvent(func(e *Event) { e.Present = HasWireSchema }), `32 03 "/a/" 3a 00 ` + idHex},
		{"zero meta data", presenceEvent(func(e *Event) { e.Present = HasMetaData }), `32 03 "/a/" 7a 04 10 00 18 00 ` + idHex},
		{"zero receive time", presenceEvent(func(e *Event) { e.Present = HasReceiveTime }),
			`32 03 "/a/" 7a 06 10 00 18 00 20 00 ` + idHex},
		{"deliver time", presenceEvent(func(e *Event) { e.MetaData.DeliverTime = 1 }),
			`32 03 "/a/" 7a 06 10 00 18 00 28 01 ` + idHex},
		{"negative create time", presenceEvent(func(e *Event) { e.MetaData.CreateTime = -1 }),
			`32 03 "/a/" 7a 0d 10 ff ff ff ff ff ff ff ff ff 01 18 00 ` + idHex},
		{"user times and infos", presenceEvent(func(e *Event) {
			e.MetaData.SetUserTime("b", 2)
			e.MetaData.SetUserTime("a", 1)
			e.MetaData.SetUserInfo("k", "")
		}), `32 03 "/a/" 7a 19 10 00 18 00 32 05 0a 01 "b" 10 02 32 05 0a 01 "a" 10 01 3a 05 0a 01 "k" 12 00 ` + idHex},
		{"causes", presenceEvent(func(e *Event) {
			e.Causes = []EventID{{SequenceNumber: 1}, {SequenceNumber: 300}}
		}), `32 03 "/a/" 6a 14 0a 10 00000000000000000000000000000000 10 01 6a 15 0a 10 00000000000000000000000000000000 10 ac 02 ` + idHex},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := unhex(t, tt.hex)
			checkReencode(t, tt.e, want)
			for name, decode := range map[string]func([]byte) (*Event, error){
				"hand": DecodeNotification, "generated": unmarshalGenerated,
			} {
				got, err := decode(want)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !got.Equal(tt.e) {
					t.Fatalf("%s: decoded %+v, want %+v", name, got, tt.e)
				}
				checkReencode(t, got, want)
			}
		})
	}
}

func TestMarshalErrors(t *testing.T) {
	if _, err := Marshal(&Event{}); !errors.Is(err, ErrBadScope) {
		t.Errorf("Marshal without scope: %v, want ErrBadScope", err)
	}
	e := presenceEvent(func(e *Event) { e.Causes = make([]EventID, MaxCauses+1) })
	if _, err := Marshal(e); !errors.Is(err, ErrTooMany) {
		t.Errorf("Marshal with %d causes: %v, want ErrTooMany", len(e.Causes), err)
	}
}
