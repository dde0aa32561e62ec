package meshmessage

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/mesh/frame"
)

// TestRegistered checks init registers the adaptor with mesh.
func TestRegistered(t *testing.T) {
	a, err := mesh.Lookup(Protocol)
	if err != nil || a.Protocol() != Protocol {
		t.Fatalf("Lookup(%q) = %v, %v", Protocol, a, err)
	}
}

// TestPackageFrame checks the ingress mapping of the golden message
// Package: the fixed attributes, id from seq, subject from topic,
// properties as attributes, body as data.
func TestPackageFrame(t *testing.T) {
	p, err := Unmarshal(testutil.GoldenHex(t, "async.hex"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := PackageFrame(p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"specversion": "1.0", "id": "42", "source": "/", "type": "eventmeshmessage",
		"subject": "/robot/arm/", "emorigin": "meshmessage", "color": "red"}
	got := map[string]string{}
	for _, a := range f.Attrs {
		got[a.Name] = a.Value
	}
	if f.Type != frame.Event || !reflect.DeepEqual(got, want) || string(f.Data) != "hi" {
		t.Fatalf("frame %v %v %q, want %v", f.Type, got, f.Data, want)
	}
	ev, err := f.RSB()
	if err != nil {
		t.Fatalf("RSB: %v", err)
	}
	if s := ev.Scope.String(); s != "/robot/arm/" {
		t.Fatalf("scope %q", s)
	}
}

// TestOverwrite checks properties, then headers, overwrite the fixed
// attributes, and a message given as a JSON string decodes too.
func TestOverwrite(t *testing.T) {
	m, _ := json.Marshal(Message{Topic: "/a/", Properties: map[string]string{"type": "p", "source": "/p"},
		Headers: map[string]string{"type": "h"}, Body: "x"})
	s, _ := json.Marshal(string(m))
	for _, msg := range [][]byte{m, s} {
		f, err := Adaptor{}.ToFrame(msg)
		if err != nil {
			t.Fatal(err)
		}
		typ, _ := f.Get("type")
		src, _ := f.Get("source")
		id, _ := f.Get("id")
		if typ != "h" || src != "/p" || id == "" {
			t.Fatalf("type %q source %q id %q", typ, src, id)
		}
	}
}

// TestFromFrame checks the egress mapping: subject to topic, data to
// body, the fixed attributes left out of the properties.
func TestFromFrame(t *testing.T) {
	f := &frame.Frame{Type: frame.Event, Attrs: []frame.Attr{{Name: "specversion", Value: "1.0"}, {Name: "id", Value: "1"},
		{Name: "source", Value: "/s"}, {Name: "type", Value: "t"}, {Name: "subject", Value: "/x/"}, {Name: "time", Value: "2020-01-01T00:00:00Z"},
		{Name: "emorigin", Value: "meshmessage"}, {Name: "datacontenttype", Value: "text/plain"}, {Name: "color", Value: "red"}, {Name: "color", Value: "blue"}},
		Data: []byte("hello")}
	b, err := Adaptor{}.FromFrame(f)
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := Message{Topic: "/x/", Properties: map[string]string{"color": "blue"}, Body: "hello"}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("%+v, want %+v", m, want)
	}
	p, err := FramePackage(f, AsyncMessageToClient, "9")
	if err != nil || p.Header.Command != AsyncMessageToClient || p.Header.Seq != "9" ||
		p.Header.Properties[PropProtocolType] != ProtocolMeshMessage {
		t.Fatalf("FramePackage = %+v, %v", p, err)
	}
}

// TestRoundTrip checks a message survives ToFrame and FromFrame.
func TestRoundTrip(t *testing.T) {
	in := Message{Topic: "/robot/", Properties: map[string]string{"color": "red", "emttl": "100"}, Body: "text"}
	b, _ := json.Marshal(in)
	f, err := Adaptor{}.ToFrame(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Adaptor{}.FromFrame(f)
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	if err := json.Unmarshal(out, &m); err != nil || !reflect.DeepEqual(m, in) {
		t.Fatalf("%+v, %v; want %+v", m, err, in)
	}
}

// TestAdaptorErrors checks bad input fails with the sentinels.
func TestAdaptorErrors(t *testing.T) {
	for _, msg := range []string{``, `{`, `"{"`, `{"topic":"/a/","properties":{"Bad Name":"x"},"body":""}`, `[]`} {
		if _, err := (Adaptor{}).ToFrame([]byte(msg)); !errors.Is(err, ErrBadMessage) {
			t.Errorf("ToFrame(%q): %v", msg, err)
		}
	}
	if _, err := (Adaptor{}).FromFrame(&frame.Frame{Type: frame.StreamChunk}); !errors.Is(err, frame.ErrNotEvent) {
		t.Errorf("FromFrame of a chunk: %v", err)
	}
	if _, err := (Adaptor{}).FromFrame(&frame.Frame{Type: frame.Event, Data: []byte{0xff}}); !errors.Is(err, ErrBinaryData) {
		t.Errorf("FromFrame of binary data: %v", err)
	}
	p := &Package{Header: Header{Command: AsyncMessageToServer, Properties: map[string]string{PropProtocolType: ProtocolCloudEvents}},
		Body: []byte(`{"specversion":"1.0","id":"1","source":"/s","type":"t","subject":"/a/","data":"x"}`)}
	if f, err := PackageFrame(p); err != nil || f.Type != frame.Event {
		t.Errorf("PackageFrame of a CloudEvent body: %v", err)
	}
}
