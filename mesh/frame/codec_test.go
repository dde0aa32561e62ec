package frame

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
)

// TestGolden checks decoding and encoding against vectors written by hand
// from the frame layout.
func TestGolden(t *testing.T) {
	for name, want := range map[string]*Frame{
		"event.hex": {Type: Event, Attrs: []Attr{{"specversion", "1.0"}, {"id", "1"}, {"subject", "/a/"}}, Data: []byte("hi")},
		"chunk.hex": {Type: StreamChunk, Flags: FlagDone | FlagHasError, Seq: 7,
			Attrs: []Attr{{AttrSession, "s1"}, {AttrError, "boom"}}, Data: []byte("end")},
		"request.hex":  {Type: StreamReq, Attrs: []Attr{{AttrSession, "s"}, {AttrReplyTo, "r"}}, Data: []byte("prompt")},
		"empty.hex":    {Type: StreamReq},
		"reserved.hex": {Type: Event, Flags: 0xf8, Attrs: []Attr{{"x", "1"}, {"x", "2"}}},
	} {
		b := testutil.GoldenHex(t, name)
		got, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded %+v, want %+v", name, got, want)
		}
		enc, err := Marshal(want)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(enc, b) {
			t.Errorf("%s: encoded\n%x\nwant\n%x", name, enc, b)
		}
		if want.Size() != len(b) {
			t.Errorf("%s: Size %d, want %d", name, want.Size(), len(b))
		}
	}
}

func TestGet(t *testing.T) {
	f, err := Unmarshal(testutil.GoldenHex(t, "reserved.hex"))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := f.Get("x"); !ok || v != "2" {
		t.Errorf("Get(x) = %q %v, want the last value", v, ok)
	}
	f.Set("x", "3")
	f.Set("y", "4")
	if v, _ := f.Get("x"); v != "3" || len(f.Attrs) != 3 || f.Attrs[0].Value != "3" {
		t.Errorf("after Set: %+v", f.Attrs)
	}
}

func TestDecodeErrors(t *testing.T) {
	event := testutil.GoldenHex(t, "event.hex")
	mod := func(i int, c byte) []byte {
		b := bytes.Clone(event)
		b[i] = c
		return b
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrShort},
		{"header only part", event[:13], ErrShort},
		{"magic", mod(0, 0xee), ErrMagic},
		{"version", mod(1, 2), ErrVersion},
		{"type 0", mod(2, 0), ErrMsgType},
		{"type 4", mod(2, 4), ErrMsgType},
		{"too many keys", mod(9, MaxAttrs+1), ErrTooManyAttrs},
		{"more keys than there", func() []byte {
			b := bytes.Clone(event[:len(event)-2]) // no data
			b[9], b[13] = 4, 0
			return b
		}(), ErrShort},
		{"data too large", mod(11, 0x80), ErrDataTooLarge},
		{"negative data length", mod(10, 0xff), ErrDataTooLarge},
		{"truncated name", event[:HeaderLen+5], ErrShort},
		{"truncated value", event[:HeaderLen+2+11+4+1], ErrShort},
		{"truncated data", event[:len(event)-1], ErrShort},
		{"trailing", append(bytes.Clone(event), 0), ErrTrailing},
		{"name too long", mod(HeaderLen, 0x01), ErrNameTooLong},
		{"value too long", mod(HeaderLen+2+11+2, 0x10), ErrValueTooLong},
		{"value not UTF-8", mod(len(event)-3, 0xff), ErrNotUTF8},
		{"frame too large", make([]byte, MaxFrameBytes+1), ErrFrameTooLarge},
	} {
		if _, err := Unmarshal(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestEncodeLimits(t *testing.T) {
	many := make([]Attr, MaxAttrs+1)
	for _, tc := range []struct {
		name string
		f    *Frame
		want error
	}{
		{"type", &Frame{Type: 9}, ErrMsgType},
		{"attrs", &Frame{Type: Event, Attrs: many}, ErrTooManyAttrs},
		{"name", &Frame{Type: Event, Attrs: []Attr{{strings.Repeat("n", MaxNameBytes+1), ""}}}, ErrNameTooLong},
		{"value", &Frame{Type: Event, Attrs: []Attr{{"n", strings.Repeat("v", MaxValueBytes+1)}}}, ErrValueTooLong},
		{"utf8", &Frame{Type: Event, Attrs: []Attr{{"\xff", ""}}}, ErrNotUTF8},
		{"data", &Frame{Type: Event, Data: make([]byte, MaxDataBytes+1)}, ErrDataTooLarge},
	} {
		if b, err := Append([]byte("keep"), tc.f); !errors.Is(err, tc.want) || string(b) != "keep" {
			t.Errorf("%s: %v, want %v (dst %q)", tc.name, err, tc.want, b)
		}
	}
	// The largest frame the limits allow encodes and decodes.
	big := &Frame{Type: Event, Data: make([]byte, MaxDataBytes)}
	for i := range MaxAttrs {
		big.Attrs = append(big.Attrs, Attr{strings.Repeat(string(rune('a'+i%26)), MaxNameBytes-i), strings.Repeat("v", MaxValueBytes)})
	}
	b, err := Marshal(big)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Unmarshal(b); err != nil {
		t.Fatal(err)
	}
}

func TestMsgTypeString(t *testing.T) {
	for typ, want := range map[MsgType]string{StreamReq: "STREAM_REQ", StreamChunk: "STREAM_CHUNK", Event: "EVENT", 7: "MsgType(7)"} {
		if typ.String() != want {
			t.Errorf("%d: %s", typ, typ)
		}
	}
}
