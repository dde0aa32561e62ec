package a2a

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/mesh/frame"
)

var update = flag.Bool("update", false, "rewrite the golden frames")

// TestGolden: each testdata/golden/NAME.json becomes the frame encoded in
// NAME.frame, byte for byte, and the frame gives the JSON back verbatim.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.json")
	if len(files) == 0 {
		t.Fatal("no golden vectors")
	}
	a, err := mesh.Lookup(Protocol)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range files {
		t.Run(filepath.Base(in), func(t *testing.T) {
			msg, _ := os.ReadFile(in)
			f, err := a.ToFrame(msg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := frame.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(in, ".json") + ".frame"
			if *update {
				_ = os.WriteFile(golden, got, 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("frame differs from %s:\n got %q\nwant %q", golden, got, want)
			}
			back, err := frame.Unmarshal(want)
			if err != nil {
				t.Fatal(err)
			}
			out, err := a.FromFrame(back)
			if err != nil || !bytes.Equal(out, msg) {
				t.Fatalf("FromFrame: %v, %q", err, out)
			}
		})
	}
}

// TestAttributes checks the attributes the reference lists, in both
// versions' names and for a response.
func TestAttributes(t *testing.T) {
	cases := []struct {
		msg  string
		want map[string]string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"parts":[{"kind":"text","text":"hi"}]},"_topic":"/agents/a/","_seq":7,"_agentId":"a1"}}`,
			map[string]string{"id": "1", "specversion": "1.0", "source": Source, "protocol": "a2a", "ema2aversion": "2.0",
				"a2amethod": "message/send", "type": "org.apache.eventmesh.a2a.message.send.req",
				"subject": "/agents/a/", "seq": "7", "targetagent": "a1"}},
		{`{"jsonrpc":"2.0","id":"x","method":"SendStreamingMessage","params":{}}`,
			map[string]string{"id": "x", "a2amethod": "SendStreamingMessage", "type": "org.apache.eventmesh.a2a.SendStreamingMessage.req"}},
		{`{"jsonrpc":"2.0","id":"r","result":{"kind":"task"}}`,
			map[string]string{"id": "r", "type": TypeResponse, "a2amethod": ""}},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}`,
			map[string]string{"type": TypeResponse}},
	}
	for _, tc := range cases {
		f, err := Adaptor{}.ToFrame([]byte(tc.msg))
		if err != nil {
			t.Fatalf("%s: %v", tc.msg, err)
		}
		for k, v := range tc.want {
			if got, _ := f.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", tc.msg, k, got, v)
			}
		}
		if id, _ := f.Get("id"); id == "" {
			t.Errorf("%s: no id", tc.msg)
		}
		if !bytes.Equal(f.Data, []byte(tc.msg)) {
			t.Errorf("data %q is not the message", f.Data)
		}
	}
}

// TestDecodeErrors: bad input gets the JSON-RPC error its kind defines.
func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		msg  string
		code int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":`, CodeParseError},
		{"\xff", CodeParseError},
		{``, CodeParseError},
		{`[{"jsonrpc":"2.0","id":1,"method":"message/send"}]`, CodeInvalidRequest},
		{`"message/send"`, CodeInvalidRequest},
		{`{"id":1,"method":"message/send"}`, CodeInvalidRequest},
		{`{"jsonrpc":"1.0","id":1,"method":"message/send"}`, CodeInvalidRequest},
		{`{"JSONRPC":"2.0","id":1,"method":"message/send"}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{},"method":"m"}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":"p"}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":"m","result":1}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":"` + strings.Repeat("x", MaxIDBytes) + `","method":"m"}`, CodeInvalidRequest},
	}
	for _, tc := range cases {
		_, err := Decode([]byte(tc.msg))
		var e *Error
		if !errors.As(err, &e) || e.Code != tc.code {
			t.Errorf("%.60q: %v, want code %d", tc.msg, err, tc.code)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, m := range methods {
		if got, err := Lookup(m.V03, V03); err != nil || got != m {
			t.Errorf("0.3 %s: %v", m.V03, err)
		}
		if got, err := Lookup(m.V10, V10); err != nil || got != m {
			t.Errorf("1.0 %s: %v", m.V10, err)
		}
		var e *Error
		if _, err := Lookup(m.V10, V03); !errors.As(err, &e) || e.Code != CodeMethodNotFound || !strings.Contains(e.Message, m.V03) {
			t.Errorf("1.0 name under 0.3: %v", err)
		}
	}
	for h, want := range map[string]Version{"": V03, "0.3": V03, "0.3.0": V03, "1.0": V10, " 1.0.1 ": V10} {
		if v, err := ParseVersion(h); err != nil || v != want {
			t.Errorf("version %q: %v %v", h, v, err)
		}
	}
	var e *Error
	if _, err := ParseVersion("2.0"); !errors.As(err, &e) || e.Code != CodeVersionNotSupported {
		t.Errorf("version 2.0: %v", err)
	}
}
