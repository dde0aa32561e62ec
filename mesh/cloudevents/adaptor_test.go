package cloudevents

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/mesh/frame"
)

func TestAdaptorRegistered(t *testing.T) {
	a, err := mesh.Lookup(Protocol)
	if err != nil {
		t.Fatal(err)
	}
	if err := (mesh.Config{Adaptors: []string{Protocol}}).Validate(); err != nil {
		t.Errorf("config naming %s: %v", Protocol, err)
	}
	in := `{"specversion":"1.0","id":"1","source":"/s","type":"t","subject":"/a/","emttl":"100","data":{"x":1}}`
	f, err := a.ToFrame([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if f.Type != frame.Event || string(f.Data) != `{"x":1}` {
		t.Errorf("frame %+v", f)
	}
	if v, _ := f.Get("emttl"); v != "100" {
		t.Errorf("emttl %q", v)
	}
	out, err := a.FromFrame(f)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip\n%s\nwant\n%s", out, in)
	}
	if _, err := a.ToFrame([]byte(`{}`)); !errors.Is(err, cloudevent.ErrSpecVersion) {
		t.Errorf("bad input: %v", err)
	}
	if _, err := a.FromFrame(&frame.Frame{Type: frame.StreamReq}); !errors.Is(err, frame.ErrNotEvent) {
		t.Errorf("stream frame: %v", err)
	}
}

func TestConfig(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero: %v", err)
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("default: %v", err)
	}
	for _, c := range []Config{{MaxBodyBytes: -1}, {MaxBodyBytes: DefaultMaxBodyBytes + 1}, {QueueLen: -1}, {WriteTimeout: -1}} {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if d := (Config{}).withDefaults(); d.QueueLen != DefaultQueueLen || d.MaxBodyBytes != DefaultMaxBodyBytes || d.Logger == nil {
		t.Errorf("defaults %+v", d)
	}
}

func TestHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"plain": "plain", "%22red%22": `"red"`, `"quoted \"x\""`: `quoted "x"`, `"a%20b"`: "a b", "a+b": "a+b",
	} {
		if got, err := headerValue(in); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
}

// FuzzDecodeRequest checks decoding a POST in any mode never panics and
// gives only valid events.
func FuzzDecodeRequest(f *testing.F) {
	f.Add("text/plain", "ce-id", "%41", []byte("x"))
	f.Add(cloudevent.MediaType, "", "", []byte(`{"specversion":"1.0","id":"1","source":"/s","type":"t"}`))
	f.Add(cloudevent.BatchMediaType, "", "", []byte(`[{"specversion":"1.0","id":"1","source":"/s","type":"t"}]`))
	f.Fuzz(func(t *testing.T, ct, name, value string, body []byte) {
		h := http.Header{"Ce-Specversion": {"1.0"}, "Ce-Source": {"/s"}, "Ce-Type": {"t"}}
		if ct != "" {
			h.Set("Content-Type", ct)
		}
		if strings.HasPrefix(strings.ToLower(name), "ce-") {
			h[name] = []string{value}
		}
		events, err := decodeRequest(h, body)
		if err != nil {
			return
		}
		for _, e := range events {
			if err := e.Validate(); err != nil {
				t.Fatalf("decoded an invalid event: %v", err)
			}
		}
	})
}

func TestRejectReasons(t *testing.T) {
	got := RejectReasons()
	if len(got) != int(numReasons) || got[0] != "scope" {
		t.Errorf("%v", got)
	}
	seen := map[string]bool{}
	for _, r := range got {
		if r == "" || seen[r] {
			t.Errorf("reason %q empty or repeated in %v", r, got)
		}
		seen[r] = true
	}
}
