package meshmessage

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
)

// FuzzUnmarshal checks Unmarshal and Read never panic, agree, and that a
// Package they accept encodes to bytes that decode to the same Package.
func FuzzUnmarshal(f *testing.F) {
	for name := range goldens {
		f.Add(testutil.GoldenHex(&testing.T{}, name))
	}
	f.Add(prefix(Magic, Version, 13, 0))
	f.Add(prefix(Magic, Version, -1, -1))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Unmarshal(b)
		rp, rerr := Read(bytes.NewReader(b))
		if err != nil {
			return // Read may still accept b: it stops at the Package's end
		}
		if rerr != nil || !reflect.DeepEqual(p, rp) {
			t.Fatalf("Read = %+v, %v; Unmarshal = %+v", rp, rerr, p)
		}
		out, err := Marshal(p)
		if errors.Is(err, ErrTooLarge) {
			return // JSON escapes may lengthen a header near the bound
		}
		if err != nil {
			t.Fatalf("Marshal of a decoded Package: %v", err)
		}
		if len(p.Header.Properties) == 0 {
			p.Header.Properties = nil // an empty object is left out
		}
		back, err := Unmarshal(out)
		if err != nil || !reflect.DeepEqual(back, p) {
			t.Fatalf("round trip: %+v, %v; want %+v", back, err, p)
		}
	})
}

// FuzzToFrame checks the adaptor never panics on a message and that a
// frame it makes turns back into a message.
func FuzzToFrame(f *testing.F) {
	f.Add([]byte(`{"topic":"/robot/arm/","properties":{"color":"red"},"headers":{"type":"t"},"body":"hi"}`))
	f.Add([]byte(`"{\"topic\":\"/a/\",\"body\":\"x\"}"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := Adaptor{}.ToFrame(b)
		if err != nil {
			return
		}
		if _, err := (Adaptor{}).FromFrame(fr); err != nil && !errors.Is(err, ErrBinaryData) {
			t.Fatalf("FromFrame of a frame ToFrame made: %v", err)
		}
	})
}
