package cloudevent

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"testing"

	sdk "github.com/cloudevents/sdk-go/v2/event"
)

// TestSDKReadsOurJSON checks the CloudEvents Go SDK, an independent
// implementation, reads what Marshal writes as the same event.
func TestSDKReadsOurJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		ce, err := FromRSB(randomEvent(r))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Marshal(ce)
		if err != nil {
			t.Fatal(err)
		}
		var se sdk.Event
		if err := json.Unmarshal(b, &se); err != nil {
			t.Fatalf("event %d: sdk: %v\n%s", i, err, b)
		}
		if err := se.Validate(); err != nil {
			t.Fatalf("event %d: sdk Validate: %v\n%s", i, err, b)
		}
		// The SDK keeps source as a parsed URL, which writes a scheme in
		// lowercase.
		src, _ := url.Parse(ce.Source)
		if se.ID() != ce.ID || se.Source() != src.String() || se.Type() != ce.Type || se.Subject() != ce.Subject ||
			se.DataContentType() != ce.DataContentType || se.SpecVersion() != SpecVersion {
			t.Fatalf("event %d: sdk sees %v\nwe wrote %s", i, se, b)
		}
		if ce.Time != "" && FormatTime(se.Time()) != ce.Time {
			t.Fatalf("event %d: time %v, want %s", i, se.Time(), ce.Time)
		}
		for name, v := range ce.Extensions {
			if got, ok := se.Extensions()[name]; !ok || got != v {
				t.Fatalf("event %d: extension %s = %v, want %q", i, name, got, v)
			}
		}
		if !bytes.Equal(se.Data(), ce.Data) && !(len(ce.Data) == 0 && len(se.Data()) == 0) {
			t.Fatalf("event %d: data %q, want %q\n%s", i, se.Data(), ce.Data, b)
		}
	}
}

// TestWeReadSDKJSON checks Unmarshal reads what the SDK writes.
func TestWeReadSDKJSON(t *testing.T) {
	for _, tc := range []struct {
		ct   string
		data any
		want string
	}{
		{"application/json", map[string]int{"a": 1}, `{"a":1}`},
		{"text/plain", "hello", "hello"},
		{"application/octet-stream", []byte{0, 1, 2}, "\x00\x01\x02"},
	} {
		se := sdk.New()
		se.SetID("abc")
		se.SetSource("https://example.com/x")
		se.SetType("com.example.t")
		se.SetSubject("/robot/")
		se.SetExtension("color", "red")
		se.SetExtension("count", 7)
		se.SetExtension("flag", true)
		if err := se.SetData(tc.ct, tc.data); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(se)
		if err != nil {
			t.Fatal(err)
		}
		e, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if e.ID != "abc" || e.Source != "https://example.com/x" || e.Type != "com.example.t" || e.Subject != "/robot/" ||
			e.Extensions["color"] != "red" || e.Extensions["count"] != "7" || e.Extensions["flag"] != "true" ||
			string(e.Data) != tc.want || e.DataContentType != tc.ct {
			t.Errorf("%s: got %+v", b, e)
		}
	}
}
