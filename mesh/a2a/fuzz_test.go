package a2a

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rsbd/rsbd/mesh/frame"
)

// FuzzDecode: Decode never panics and returns an *Error or a message;
// every request it accepts either is refused by Frame with an *Error or
// becomes a frame that encodes, decodes and gives the input back
// verbatim.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.json")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_topic":1.5e3,"_seq":"x"}}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is no *Error", err)
			}
			return
		}
		fr, err := m.Frame()
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Frame error %v is no *Error", err)
			}
			return
		}
		enc, err := frame.Marshal(fr)
		if err != nil {
			t.Fatal(err)
		}
		back, err := frame.Unmarshal(enc)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Adaptor{}.FromFrame(back)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
