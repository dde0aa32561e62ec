package amqp1

import (
	"maps"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/cloudevent"
)

// sameEvent fails unless got is want with amqpaddress.
func sameEvent(t *testing.T, got, want *cloudevent.Event, address string) {
	t.Helper()
	bridgetest.SameEvent(t, got, want, map[string]string{ExtAddress: address})
}

func TestBinaryIsTheJMSFlavour(t *testing.T) {
	m, err := Encode(bridge.FormatBinary, bridgetest.Sample())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"cloudEvents_specversion": "1.0", "cloudEvents_id": "e-1", "cloudEvents_source": "/sensors/7",
		"cloudEvents_type": "com.example.reading", "cloudEvents_subject": "temp", "cloudEvents_time": "2026-01-02T03:04:05.123456Z",
		"cloudEvents_datacontenttype": "application/json", "cloudEvents_dataschema": "https://example.com/schema", "cloudEvents_partitionkey": "k1"}
	if !maps.Equal(m.ApplicationProperties, want) || *m.Properties.ContentType != "application/json" || *m.Properties.GroupID != "k1" ||
		m.Properties.MessageID != "e-1" || len(m.Data) != 1 || string(m.Data[0]) != `{"c":21.5}` || !m.Header.Durable {
		t.Fatalf("message %+v %+v", m, m.Properties)
	}
	got, err := Decode(m, "/queue/q", bridge.FormatBinary, "p", bridgetest.At)
	if err != nil {
		t.Fatal(err)
	}
	sameEvent(t, got, bridgetest.Sample(), "/queue/q")
}

func TestColonPropertiesTypedValuesAndValueBodies(t *testing.T) {
	ct := "text/plain"
	m := &amqp.Message{Properties: &amqp.MessageProperties{ContentType: &ct}, Value: "hi", ApplicationProperties: map[string]any{
		"cloudEvents:specversion": "1.0", "cloudEvents:id": "x", "cloudEvents:source": "/s", "cloudEvents:type": "t",
		"cloudEvents:count": int64(7), "cloudEvents:ok": false, "JMSXGroupID": "ignored"}}
	got, err := Decode(m, "a", bridge.FormatBinary, "p", bridgetest.At)
	if err != nil {
		t.Fatal(err)
	}
	sameEvent(t, got, &cloudevent.Event{ID: "x", Source: "/s", Type: "t", DataContentType: "text/plain",
		Extensions: map[string]string{"count": "7", "ok": "false"}, Data: []byte("hi")}, "a")
}

func TestEveryFormatRoundTrips(t *testing.T) {
	for _, f := range []bridge.Format{bridge.FormatStructured, bridge.FormatFrame} {
		m, err := Encode(f, bridgetest.Sample())
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(m, "q", f, "p", bridgetest.At)
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		sameEvent(t, got, bridgetest.Sample(), "q")
		if f == bridge.FormatStructured {
			if got, err = Decode(m, "q", bridge.FormatBinary, "p", bridgetest.At); err != nil {
				t.Fatal(err)
			}
			sameEvent(t, got, bridgetest.Sample(), "q")
		}
	}
}

func TestAttributelessMessages(t *testing.T) {
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		m    amqp.Message
		want cloudevent.Event
	}{
		{"string id, creation time", amqp.Message{Properties: &amqp.MessageProperties{MessageID: "m-1", CreationTime: &ts}, Data: [][]byte{[]byte(`{}`)}},
			cloudevent.Event{ID: "m-1", Time: cloudevent.FormatTime(ts), DataContentType: bridge.ContentJSON, Data: []byte(`{}`)}},
		{"numeric id", amqp.Message{Properties: &amqp.MessageProperties{MessageID: uint64(42)}, Data: [][]byte{[]byte("a"), []byte("b")}},
			cloudevent.Event{ID: "42", Time: cloudevent.FormatTime(bridgetest.At), DataContentType: bridge.ContentText, Data: []byte("ab")}},
		{"no id", amqp.Message{Value: []byte{0, 1}},
			cloudevent.Event{ID: "q-9", Time: cloudevent.FormatTime(bridgetest.At), DataContentType: bridge.ContentBytes, Data: []byte{0, 1}}},
	} {
		got, err := Decode(&tc.m, "/queue/q", bridge.FormatBinary, "q-9", bridgetest.At)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		w := tc.want
		w.Source, w.Type = "/amqp/queue/q", bridge.FallbackType
		sameEvent(t, got, &w, "/queue/q")
	}
}

func TestMalformedMessagesNameTheirReason(t *testing.T) {
	st := cloudevent.MediaType
	for _, tc := range []struct {
		name string
		f    bridge.Format
		m    amqp.Message
		want bridge.Reason
	}{
		{"bad json", bridge.FormatStructured, amqp.Message{Data: [][]byte{[]byte(`{"specversion":`)}}, bridge.ReasonJSON},
		{"bad json by content type", bridge.FormatBinary, amqp.Message{Properties: &amqp.MessageProperties{ContentType: &st}, Data: [][]byte{[]byte(`{`)}}, bridge.ReasonJSON},
		{"invalid extension name", bridge.FormatBinary, amqp.Message{ApplicationProperties: map[string]any{"cloudEvents_specversion": "1.0",
			"cloudEvents_id": "1", "cloudEvents_source": "/s", "cloudEvents_type": "t", "cloudEvents_Bad-Name": "v"}}, bridge.ReasonAttribute},
		{"property of a list type", bridge.FormatBinary, amqp.Message{ApplicationProperties: map[string]any{"cloudEvents_id": []any{1}}}, bridge.ReasonAttribute},
		{"sequence body", bridge.FormatBinary, amqp.Message{Sequence: [][]any{{1}}}, bridge.ReasonAttribute},
	} {
		_, err := Decode(&tc.m, "q", tc.f, "p", bridgetest.At)
		bridgetest.Refused(t, tc.name, err, tc.want)
	}
}
