package mqtt

import (
	"errors"
	"maps"
	"testing"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/cloudevent"
)

// sample is bridgetest.Sample with a second extension, traceparent, so
// that the user properties carry more than one.
func sample() *cloudevent.Event {
	e := bridgetest.Sample()
	e.Extensions["traceparent"] = "00-x"
	return e
}

// sameEvent fails unless got is want plus the broker extensions of m.
func sameEvent(t *testing.T, got, want *cloudevent.Event, m *Message) {
	t.Helper()
	broker := map[string]string{ExtTopic: m.Topic, ExtQoS: string('0' + rune(m.QoS))}
	if m.Retain {
		broker[ExtRetained] = "true"
	}
	bridgetest.SameEvent(t, got, want, broker)
}

func TestBinaryPutsAttributesInUserPropertiesWithoutPrefix(t *testing.T) {
	m := Message{Topic: "a/b", QoS: 2}
	if err := Encode(&m, bridge.FormatBinary, sample(), true); err != nil {
		t.Fatal(err)
	}
	if m.ContentType != "application/json" || string(m.Payload) != `{"c":21.5}` {
		t.Fatalf("content type %q payload %q", m.ContentType, m.Payload)
	}
	props := map[string]string{}
	for _, u := range m.User {
		props[u.Key] = u.Value
	}
	want := map[string]string{"specversion": "1.0", "id": "e-1", "source": "/sensors/7", "type": "com.example.reading",
		"subject": "temp", "time": "2026-01-02T03:04:05.123456Z", "dataschema": "https://example.com/schema",
		"partitionkey": "k1", "traceparent": "00-x"}
	if !maps.Equal(props, want) {
		t.Fatalf("user properties %v, want %v", props, want)
	}
	got, err := Decode(&m, bridge.FormatBinary, "a/b-1", bridgetest.At)
	if err != nil {
		t.Fatal(err)
	}
	sameEvent(t, got, sample(), &m)
}

func TestEveryFormatRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		f  bridge.Format
		v5 bool
		ct string
	}{
		{bridge.FormatBinary, true, "application/json"},
		{bridge.FormatStructured, true, cloudevent.MediaType},
		{bridge.FormatStructured, false, ""},
		{bridge.FormatFrame, true, bridge.FrameContentType},
		{bridge.FormatFrame, false, ""},
	} {
		m := Message{Topic: "t", QoS: 1, Retain: true}
		if err := Encode(&m, tc.f, sample(), tc.v5); err != nil {
			t.Fatal(err)
		}
		if m.ContentType != tc.ct {
			t.Errorf("%v v5=%v: content type %q, want %q", tc.f, tc.v5, m.ContentType, tc.ct)
		}
		got, err := Decode(&m, tc.f, "t-1", bridgetest.At)
		if err != nil {
			t.Fatalf("%v: %v", tc.f, err)
		}
		sameEvent(t, got, sample(), &m)
	}
}

func TestRawWritesDataAloneAndReadsAttributeless(t *testing.T) {
	m := Message{Topic: "plant/line 1", QoS: 0}
	if err := Encode(&m, bridge.FormatRaw, sample(), false); err != nil {
		t.Fatal(err)
	}
	if string(m.Payload) != `{"c":21.5}` || len(m.User) != 0 {
		t.Fatalf("raw message %+v", m)
	}
	got, err := Decode(&m, bridge.FormatRaw, "plant/line 1-7", bridgetest.At)
	if err != nil {
		t.Fatal(err)
	}
	want := &cloudevent.Event{ID: "plant/line 1-7", Source: "/mqtt/plant/line%201", Type: bridge.FallbackType,
		Time: cloudevent.FormatTime(bridgetest.At), DataContentType: bridge.ContentJSON, Data: m.Payload}
	sameEvent(t, got, want, &m)
}

func TestAttributelessMessagesAreReadAsEvents(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    bridge.Format
		m    Message
		ct   string
	}{
		{"v5 plain text", bridge.FormatBinary, Message{Topic: "x", Payload: []byte("hello")}, bridge.ContentText},
		{"v5 own content type", bridge.FormatBinary, Message{Topic: "x", ContentType: "text/csv", Payload: []byte("a,b"),
			User: []UserProperty{{"note", "not an attribute"}}}, "text/csv"},
		{"3.1.1 json without specversion", bridge.FormatStructured, Message{Topic: "x", Payload: []byte(`{"a":1}`)}, bridge.ContentJSON},
		{"3.1.1 bytes", bridge.FormatStructured, Message{Topic: "x", Payload: []byte{0, 1, 2}}, bridge.ContentBytes},
	} {
		got, err := Decode(&tc.m, tc.f, "x-9", bridgetest.At)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := &cloudevent.Event{ID: "x-9", Source: "/mqtt/x", Type: bridge.FallbackType,
			Time: cloudevent.FormatTime(bridgetest.At), DataContentType: tc.ct, Data: tc.m.Payload}
		sameEvent(t, got, want, &tc.m)
	}
}

func TestMalformedMessagesNameTheirReason(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    bridge.Format
		m    Message
		want bridge.Reason
	}{
		{"bad json", bridge.FormatStructured, Message{Payload: []byte(`{"specversion":"1.0","id":`)}, bridge.ReasonJSON},
		{"bad json, v5 structured", bridge.FormatBinary, Message{ContentType: cloudevent.MediaType, Payload: []byte(`{"specversion"`)}, bridge.ReasonJSON},
		{"invalid extension name", bridge.FormatBinary, Message{User: []UserProperty{{"specversion", "1.0"}, {"id", "1"},
			{"source", "/s"}, {"type", "t"}, {"Bad-Name", "v"}}}, bridge.ReasonAttribute},
		{"missing id", bridge.FormatBinary, Message{User: []UserProperty{{"specversion", "1.0"}, {"source", "/s"}, {"type", "t"}}}, bridge.ReasonAttribute},
		{"bad frame", bridge.FormatFrame, Message{Payload: []byte{0xef, 9, 3}}, bridge.ReasonFrame},
	} {
		tc.m.Topic = "t"
		_, err := Decode(&tc.m, tc.f, "t-1", bridgetest.At)
		bridgetest.Refused(t, tc.name, err, tc.want)
	}
}

func TestTooManyUserPropertiesAreRefusedUnparsed(t *testing.T) {
	m := Message{Topic: "t", User: make([]UserProperty, maxUserProperties+1)}
	_, err := Decode(&m, bridge.FormatBinary, "t-1", bridgetest.At)
	if !errors.Is(err, cloudevent.ErrTooManyAttributes) {
		t.Fatalf("err %v", err)
	}
}

func TestBrokerExtensionsOverrideTheProducers(t *testing.T) {
	e := sample()
	e.Extensions[ExtTopic] = "forged"
	m := Message{Topic: "real", QoS: 1}
	if err := Encode(&m, bridge.FormatBinary, e, true); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(&m, bridge.FormatBinary, "real-1", bridgetest.At)
	if err != nil {
		t.Fatal(err)
	}
	if got.Extensions[ExtTopic] != "real" || got.Extensions[ExtQoS] != "1" {
		t.Fatalf("extensions %v", got.Extensions)
	}
}

func TestPositionsAreDistinctAndOrdered(t *testing.T) {
	p := newPositions()
	a, b := p.next("t"), p.next("t")
	if a == b || len(a) < 3 || a[:2] != "t-" {
		t.Fatalf("positions %q %q", a, b)
	}
}
