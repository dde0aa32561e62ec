package meshmessage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
)

// goldens are the Packages of the golden vectors, written from the
// reference's layout.
var goldens = map[string]*Package{
	"heartbeat.hex": {Header: Header{Command: HeartbeatRequest, Seq: "7"}, Body: []byte{}},
	"async.hex": {Header: Header{Command: AsyncMessageToServer, Seq: "42",
		Properties: map[string]string{PropProtocolType: ProtocolMeshMessage}},
		Body: []byte(`{"topic":"/robot/arm/","properties":{"color":"red"},"body":"hi"}`)},
	"response.hex": {Header: Header{Command: HelloResponse, Code: 1, Desc: "denied", Seq: "1"}, Body: []byte{}},
}

// TestGolden checks decoding, reading and encoding against the vectors.
func TestGolden(t *testing.T) {
	for name, want := range goldens {
		b := testutil.GoldenHex(t, name)
		got, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: Unmarshal: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded %+v, want %+v", name, got, want)
		}
		r := bytes.NewReader(append(append([]byte{}, b...), b...))
		for range 2 {
			got, err = Read(r)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Read = %+v, %v", name, got, err)
			}
		}
		if _, err := Read(r); err != io.EOF {
			t.Errorf("%s: Read at the end: %v, want io.EOF", name, err)
		}
		out, err := Marshal(want)
		if err != nil || !bytes.Equal(out, b) {
			t.Errorf("%s: Marshal = %x, %v\nwant %x", name, out, err, b)
		}
	}
}

// prefix builds a Package prefix from its fields.
func prefix(magic, version string, length, headerLen int32) []byte {
	b := append([]byte(magic), version...)
	b = binary.BigEndian.AppendUint32(b, uint32(length))
	return binary.BigEndian.AppendUint32(b, uint32(headerLen))
}

// TestBadInput checks each refusal wraps its sentinel, from Unmarshal and
// from Read.
func TestBadInput(t *testing.T) {
	good := testutil.GoldenHex(t, "async.hex")
	hdr := []byte(`{"cmd":"X"}`)
	withHeader := func(pre []byte, h []byte) []byte { return append(pre, h...) }
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"magic", append([]byte("EventMash"), good[9:]...), ErrBadMagic},
		{"short magic", []byte("Evx"), ErrBadMagic},
		{"version", append([]byte("EventMesh0001"), good[13:]...), ErrBadVersion},
		{"short", good[:5], ErrTruncated},
		{"cut", good[:len(good)-1], ErrTruncated},
		{"trailing", append(append([]byte{}, good...), 0), ErrTrailing},
		{"negative length", prefix(Magic, Version, -1, 0), ErrBadLength},
		{"length under 13", prefix(Magic, Version, 12, 0), ErrBadLength},
		{"negative header", prefix(Magic, Version, 20, -1), ErrBadLength},
		{"header past length", prefix(Magic, Version, 20, 8), ErrBadLength},
		{"oversize", prefix(Magic, Version, MaxPackage-8+1, 0), ErrTooLarge},
		{"huge", prefix(Magic, Version, 1<<31-1, 0), ErrTooLarge},
		{"header json", withHeader(prefix(Magic, Version, 13+2, 2), []byte("{]")), ErrBadHeader},
		{"no command", withHeader(prefix(Magic, Version, 13+2, 2), []byte("{}")), ErrBadHeader},
		{"header type", withHeader(prefix(Magic, Version, 13+10, 10), []byte(`{"code":""}`)[:10]), ErrBadHeader},
		{"empty header", prefix(Magic, Version, 13, 0), ErrBadHeader},
		{"ok header, cut body", withHeader(prefix(Magic, Version, int32(13+len(hdr)+4), int32(len(hdr))), hdr), ErrTruncated},
	} {
		if _, err := Unmarshal(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: Unmarshal: %v, want %v", c.name, err, c.want)
		}
		want := c.want
		if c.name == "short magic" {
			want = ErrTruncated // Read waits for the whole prefix
		}
		if c.name == "trailing" {
			continue // Read stops at the Package's end
		}
		if _, err := Read(bytes.NewReader(c.b)); !errors.Is(err, want) {
			t.Errorf("%s: Read: %v, want %v", c.name, err, want)
		}
	}
}

// TestMarshalBounds checks a Package of exactly MaxPackage bytes encodes
// and decodes and one byte more is refused.
func TestMarshalBounds(t *testing.T) {
	p := &Package{Header: Header{Command: AsyncMessageToClient}}
	h := len(`{"cmd":"ASYNC_MESSAGE_TO_CLIENT","code":0}`)
	p.Body = make([]byte, MaxPackage-PrefixLen-h)
	b, err := Marshal(p)
	if err != nil || len(b) != MaxPackage {
		t.Fatalf("Marshal at the bound: %d bytes, %v", len(b), err)
	}
	if _, err := Unmarshal(b); err != nil {
		t.Fatalf("Unmarshal at the bound: %v", err)
	}
	p.Body = append(p.Body, 0)
	if _, err := Marshal(p); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Marshal past the bound: %v", err)
	}
	if _, err := Marshal(&Package{}); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("Marshal without a command: %v", err)
	}
}
