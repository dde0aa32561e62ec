package notification

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

const (
	scopeHex  = `32 03 "/a/" `
	senderHex = `55 86 fd 91 90 1f 46 58 90 e1 25 a8 bf ac 52 1a `
)

// decodeCases are inputs, mostly not canonically encoded, on which both
// decoders must agree: same sentinel error, or equal events.
var decodeCases = []struct {
	name    string
	hex     string
	wantErr error
	check   func(e *Event) bool
}{
	{"duplicate scope keeps last", `32 03 "/b/" ` + scopeHex + idHex, nil,
		func(e *Event) bool { return e.Scope.String() == "/a/" }},
	{"scope normalized", `32 02 "/a" ` + idHex, nil,
		func(e *Event) bool { return e.Scope.String() == "/a/" }},
	{"event id merged", scopeHex + `e2 06 12 0a 10 ` + senderHex + `e2 06 02 10 07`, nil,
		func(e *Event) bool { return e.ID.SequenceNumber == 7 && e.ID.SenderID[0] == 0x55 }},
	{"short sender overridden", scopeHex + `e2 06 05 0a 03 01 02 03 ` + idHex, nil,
		func(e *Event) bool { return e.ID.SenderID[0] == 0x55 }},
	{"meta data merged", scopeHex + `7a 09 10 05 32 05 0a 01 "x" 10 01 7a 09 18 06 32 05 0a 01 "y" 10 02 ` + idHex, nil,
		func(e *Event) bool {
			m := e.MetaData
			return m.CreateTime == 5 && m.SendTime == 6 && len(m.UserTimes) == 2 && m.UserTimes[1].Key == "y"
		}},
	{"unknown varint field", scopeHex + `98 06 01 ` + idHex, nil, nil},
	{"unknown group field", scopeHex + `93 03 08 01 94 03 ` + idHex, nil, nil},
	{"unknown fixed fields", `1d 00 00 00 00 19 00 00 00 00 00 00 00 00 ` + scopeHex + idHex, nil, nil},
	{"scope as varint skipped", `30 05 ` + scopeHex + idHex, nil, nil},
	{"event id as varint skipped", scopeHex + `e0 06 01 ` + idHex, nil, nil},
	{"causes as varint skipped", scopeHex + `68 01 ` + idHex, nil,
		func(e *Event) bool { return len(e.Causes) == 0 }},
	{"unknown field in event id", scopeHex + `e2 06 16 18 05 0a 10 ` + senderHex + `10 07`, nil, nil},
	{"data repeated, last empty", scopeHex + `4a 01 "x" 4a 00 ` + idHex, nil,
		func(e *Event) bool { return len(e.Data) == 0 && e.Present&HasData != 0 }},
	{"user time timestamp as bytes skipped", scopeHex + `7a 0d 10 00 18 00 32 07 0a 01 "x" 12 00 10 03 ` + idHex, nil,
		func(e *Event) bool { t, ok := e.MetaData.UserTime("x"); return ok && t == 3 }},

	{"missing event id", scopeHex, ErrMissingEventID, nil},
	{"empty input", ``, ErrMissingEventID, nil},
	{"short sender", scopeHex + `e2 06 13 0a 0f 86 fd 91 90 1f 46 58 90 e1 25 a8 bf ac 52 1a 10 07`, ErrBadSenderID, nil},
	{"missing sender", scopeHex + `e2 06 02 10 07`, ErrBadSenderID, nil},
	{"missing sequence number", scopeHex + `e2 06 12 0a 10 ` + senderHex, ErrMalformed, nil},
	{"missing scope", idHex, ErrBadScope, nil},
	{"empty scope", `32 00 ` + idHex, ErrBadScope, nil},
	{"invalid scope", `32 03 "a/b" ` + idHex, ErrBadScope, nil},
	{"meta data without send time", scopeHex + `7a 02 10 00 ` + idHex, ErrMalformed, nil},
	{"meta data split still lacks send time", scopeHex + `7a 02 10 00 7a 02 20 00 ` + idHex, ErrMalformed, nil},
	{"user time without key", scopeHex + `7a 06 10 00 18 00 32 02 10 01 ` + idHex, ErrMalformed, nil},
	{"user info without value", scopeHex + `7a 07 10 00 18 00 3a 03 0a 01 "k" ` + idHex, ErrMalformed, nil},
	{"cause without sender", scopeHex + `6a 02 10 00 ` + idHex, ErrBadSenderID, nil},
	{"cause without sequence number", scopeHex + `6a 12 0a 10 ` + senderHex + idHex, ErrMalformed, nil},
	{"length past end", `32 7f "/a/"`, ErrMalformed, nil},
	{"truncated event id", scopeHex + `e2 06 14 0a 10 55 86`, ErrMalformed, nil},
	{"stray end group", scopeHex + `94 03 ` + idHex, ErrMalformed, nil},
	{"unterminated group", scopeHex + idHex + ` 93 03 08 01`, ErrMalformed, nil},
	{"field number zero", `02 00 ` + scopeHex + idHex, ErrMalformed, nil},
	{"overlong varint", scopeHex + `98 06 ff ff ff ff ff ff ff ff ff ff 01 ` + idHex, ErrMalformed, nil},
	{"field number above 2^29-1", scopeHex + `95 8f af 98 30 00 00 00 00 ` + idHex, ErrMalformed, nil},
	// Inside a skipped group the generated code does not check field numbers either.
	{"field number above 2^29-1 in group", scopeHex + `93 03 80 80 80 80 10 01 94 03 ` + idHex, nil, nil},
	{"field number above 2^29-1 in event id", scopeHex + `e2 06 1a 80 80 80 80 10 01 0a 10 ` + senderHex + `10 07`, ErrMalformed, nil},
	{"truncated tag", scopeHex + idHex + ` e2`, ErrMalformed, nil},
	{"bad varint in meta data", scopeHex + `7a 02 10 ff ` + idHex, ErrMalformed, nil},
}

func TestDecodeAgreesWithGenerated(t *testing.T) {
	for _, tt := range decodeCases {
		t.Run(tt.name, func(t *testing.T) {
			b := unhex(t, tt.hex)
			e, err := DecodeNotification(b)
			g, gerr := unmarshalGenerated(b)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !errors.Is(gerr, tt.wantErr) {
					t.Fatalf("errors: hand %v, generated %v; want %v", err, gerr, tt.wantErr)
				}
				return
			}
			if err != nil || gerr != nil {
				t.Fatalf("errors: hand %v, generated %v", err, gerr)
			}
			if !e.Equal(g) || e.Present != g.Present {
				t.Fatalf("hand %+v\ngenerated %+v", e, g)
			}
			if tt.check != nil && !tt.check(e) {
				t.Fatalf("unexpected event %+v", e)
			}
		})
	}
}

func TestDecodeLimits(t *testing.T) {
	cause := unhex(t, `6a 14 0a 10 `+senderHex+`10 01`)
	userTime := unhex(t, `32 05 0a 01 "t" 10 01`)
	userInfo := unhex(t, `3a 05 0a 01 "k" 12 00`)
	meta := func(entry []byte, n int) []byte {
		body := append(unhex(t, `10 00 18 00`), bytes.Repeat(entry, n)...)
		b := protowire.AppendTag(nil, fieldMetaData, protowire.BytesType)
		return protowire.AppendBytes(b, body)
	}
	tests := []struct {
		name   string
		middle func(n int) []byte
		max    int
	}{
		{"causes", func(n int) []byte { return bytes.Repeat(cause, n) }, MaxCauses},
		{"user times", func(n int) []byte { return meta(userTime, n) }, MaxUserTimes},
		{"user infos", func(n int) []byte { return meta(userInfo, n) }, MaxUserInfos},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range []int{tt.max, tt.max + 1} {
				b := append(unhex(t, scopeHex), tt.middle(n)...)
				b = append(b, unhex(t, idHex)...)
				_, err := DecodeNotification(b)
				_, gerr := unmarshalGenerated(b)
				if n <= tt.max && (err != nil || gerr != nil) {
					t.Fatalf("%d entries: hand %v, generated %v", n, err, gerr)
				}
				if n > tt.max && (!errors.Is(err, ErrTooMany) || !errors.Is(gerr, ErrTooMany)) {
					t.Fatalf("%d entries: hand %v, generated %v; want ErrTooMany", n, err, gerr)
				}
			}
		})
	}
}

func TestFromNotificationChecksRequired(t *testing.T) {
	good := func() *rsbpb.Notification {
		return ToNotification(presenceEvent(func(e *Event) {
			e.Causes = []EventID{{}}
			e.MetaData.SetUserTime("t", 1)
			e.MetaData.SetUserInfo("k", "v")
		}))
	}
	tests := []struct {
		name    string
		mod     func(n *rsbpb.Notification)
		wantErr error
	}{
		{"no event id", func(n *rsbpb.Notification) { n.EventId = nil }, ErrMissingEventID},
		{"no sequence number", func(n *rsbpb.Notification) { n.EventId.SequenceNumber = nil }, ErrMalformed},
		{"cause sender", func(n *rsbpb.Notification) { n.Causes[0].SenderId = nil }, ErrBadSenderID},
		{"create time", func(n *rsbpb.Notification) { n.MetaData.CreateTime = nil }, ErrMalformed},
		{"user time key", func(n *rsbpb.Notification) { n.MetaData.UserTimes[0].Key = nil }, ErrMalformed},
		{"user time stamp", func(n *rsbpb.Notification) { n.MetaData.UserTimes[0].Timestamp = nil }, ErrMalformed},
		{"user info value", func(n *rsbpb.Notification) { n.MetaData.UserInfos[0].Value = nil }, ErrMalformed},
		{"scope", func(n *rsbpb.Notification) { n.Scope = []byte("/a//") }, ErrBadScope},
	}
	if _, err := FromNotification(good()); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		n := good()
		tt.mod(n)
		if _, err := FromNotification(n); !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.wantErr)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add(unhex(f, pythonFrameHex))
	f.Add(unhex(f, rpcErrorReplyHex))
	for _, tt := range decodeCases {
		f.Add(unhex(f, tt.hex))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeAll(t, b) // the Decoder agrees, copying or aliasing
		e, err := DecodeNotification(b)
		g, gerr := unmarshalGenerated(b)
		if (err == nil) != (gerr == nil) {
			t.Fatalf("hand error %v, generated error %v", err, gerr)
		}
		var n rsbpb.Notification
		if perr := proto.Unmarshal(b, &n); perr != nil && err == nil {
			t.Fatalf("strict proto.Unmarshal fails (%v) where DecodeNotification succeeds", perr)
		}
		if err != nil {
			return
		}
		if !e.Equal(g) || e.Present != g.Present {
			t.Fatalf("hand %+v\ngenerated %+v", e, g)
		}
		out, err := Marshal(e)
		if err != nil {
			t.Fatalf("Marshal of a decoded event: %v", err)
		}
		if gen, err := marshalGenerated(e); err != nil || !bytes.Equal(out, gen) {
			t.Fatalf("Marshal % x\ngenerated % x (%v)", out, gen, err)
		}
		e2, err := Unmarshal(out)
		if err != nil {
			t.Fatalf("re-decoding % x: %v", out, err)
		}
		if !e2.Equal(e) || e2.Present != e.Present {
			t.Fatalf("re-decoded %+v\nwant %+v", e2, e)
		}
		if out2, _ := Marshal(e2); !bytes.Equal(out, out2) {
			t.Fatalf("re-encoding differs: % x, % x", out, out2)
		}
	})
}
