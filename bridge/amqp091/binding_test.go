package amqp091

import (
	"maps"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/cloudevent"
)

// sameEvent fails unless got is want with the broker extensions.
func sameEvent(t *testing.T, got, want *cloudevent.Event, key, redelivered string) {
	t.Helper()
	bridgetest.SameEvent(t, got, want, map[string]string{ExtRoutingKey: key, ExtRedelivered: redelivered})
}

// delivery returns the Delivery of a publishing, as the broker gives it.
func delivery(p amqp.Publishing, key string) *Delivery {
	return &Delivery{Queue: "q", RoutingKey: key, MessageID: p.MessageId, Timestamp: p.Timestamp,
		ContentType: p.ContentType, Headers: p.Headers, Body: p.Body}
}

func TestBinaryHeadersAndContentType(t *testing.T) {
	p, err := Encode(bridge.FormatBinary, bridgetest.Sample())
	if err != nil {
		t.Fatal(err)
	}
	want := amqp.Table{"cloudEvents:specversion": "1.0", "cloudEvents:id": "e-1", "cloudEvents:source": "/sensors/7",
		"cloudEvents:type": "com.example.reading", "cloudEvents:subject": "temp", "cloudEvents:time": "2026-01-02T03:04:05.123456Z",
		"cloudEvents:dataschema": "https://example.com/schema", "cloudEvents:partitionkey": "k1"}
	if !maps.Equal(map[string]any(p.Headers), map[string]any(want)) || p.ContentType != "application/json" ||
		p.DeliveryMode != amqp.Persistent || p.MessageId != "e-1" {
		t.Fatalf("publishing %+v", p)
	}
	got, err := Decode(delivery(p, "rk"), bridge.FormatBinary, "q-1", bridgetest.At)
	if err != nil {
		t.Fatal(err)
	}
	sameEvent(t, got, bridgetest.Sample(), "rk", "false")
}

func TestUnderscoreHeadersAndTypedValuesAreRead(t *testing.T) {
	d := &Delivery{Queue: "q", RoutingKey: "k", Redelivered: true, ContentType: "text/plain", Body: []byte("hi"), Headers: amqp.Table{
		"cloudEvents_specversion": "1.0", "cloudEvents_id": "x", "cloudEvents_source": "/s", "cloudEvents_type": "t",
		"cloudEvents_count": int32(7), "cloudEvents_ok": true, "other": "ignored"}}
	got, err := Decode(d, bridge.FormatBinary, "q-1", bridgetest.At)
	if err != nil {
		t.Fatal(err)
	}
	want := &cloudevent.Event{ID: "x", Source: "/s", Type: "t", DataContentType: "text/plain",
		Extensions: map[string]string{"count": "7", "ok": "true"}, Data: []byte("hi")}
	sameEvent(t, got, want, "k", "true")
}

func TestEveryFormatRoundTrips(t *testing.T) {
	for _, f := range []bridge.Format{bridge.FormatStructured, bridge.FormatFrame} {
		p, err := Encode(f, bridgetest.Sample())
		if err != nil {
			t.Fatal(err)
		}
		if p.ContentType != bridge.ContentType(f, bridgetest.Sample()) || len(p.Headers) != 0 {
			t.Fatalf("%v: publishing %+v", f, p)
		}
		got, err := Decode(delivery(p, "k"), f, "q-1", bridgetest.At)
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		sameEvent(t, got, bridgetest.Sample(), "k", "false")
	}
	// A binary bridge reads a structured message by its content type.
	p, _ := Encode(bridge.FormatStructured, bridgetest.Sample())
	got, err := Decode(delivery(p, "k"), bridge.FormatBinary, "q-1", bridgetest.At)
	if err != nil {
		t.Fatal(err)
	}
	sameEvent(t, got, bridgetest.Sample(), "k", "false")
}

func TestAttributelessMessages(t *testing.T) {
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		f    bridge.Format
		d    Delivery
		want cloudevent.Event
	}{
		{"message id and timestamp", bridge.FormatBinary, Delivery{MessageID: "m-42", Timestamp: ts, Body: []byte(`[1,2]`)},
			cloudevent.Event{ID: "m-42", Time: cloudevent.FormatTime(ts), DataContentType: bridge.ContentJSON}},
		{"neither", bridge.FormatBinary, Delivery{Body: []byte("plain")},
			cloudevent.Event{ID: "q-1", Time: cloudevent.FormatTime(bridgetest.At), DataContentType: bridge.ContentText}},
		{"own content type, raw", bridge.FormatRaw, Delivery{ContentType: "image/png", Body: []byte{1, 2}, Headers: amqp.Table{"cloudEvents:id": "ignored"}},
			cloudevent.Event{ID: "q-1", Time: cloudevent.FormatTime(bridgetest.At), DataContentType: "image/png"}},
	} {
		tc.d.Queue, tc.d.RoutingKey = "q", "q"
		got, err := Decode(&tc.d, tc.f, "q-1", bridgetest.At)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		w := tc.want
		w.Source, w.Type, w.Data = "/rabbitmq/q", bridge.FallbackType, tc.d.Body
		sameEvent(t, got, &w, "q", "false")
	}
}

func TestMalformedMessagesNameTheirReason(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    bridge.Format
		d    Delivery
		want bridge.Reason
	}{
		{"bad json", bridge.FormatStructured, Delivery{Body: []byte(`{"specversion":`)}, bridge.ReasonJSON},
		{"bad json by content type", bridge.FormatBinary, Delivery{ContentType: cloudevent.MediaType, Body: []byte(`{`)}, bridge.ReasonJSON},
		{"invalid extension name", bridge.FormatBinary, Delivery{Headers: amqp.Table{"cloudEvents:specversion": "1.0", "cloudEvents:id": "1",
			"cloudEvents:source": "/s", "cloudEvents:type": "t", "cloudEvents:Bad-Name": "v"}}, bridge.ReasonAttribute},
		{"header of a table type", bridge.FormatBinary, Delivery{Headers: amqp.Table{"cloudEvents:specversion": "1.0",
			"cloudEvents:id": amqp.Table{}}}, bridge.ReasonAttribute},
		{"too many headers", bridge.FormatBinary, Delivery{Headers: manyHeaders()}, bridge.ReasonTooLarge},
	} {
		tc.d.Queue = "q"
		_, err := Decode(&tc.d, tc.f, "q-1", bridgetest.At)
		bridgetest.Refused(t, tc.name, err, tc.want)
	}
}

// manyHeaders returns more headers than a message may have.
func manyHeaders() amqp.Table {
	t := amqp.Table{}
	for i := range maxHeaders + 1 {
		t[string(rune('a'+i%26))+string(rune('a'+i/26))] = "x"
	}
	return t
}

func TestParseAddress(t *testing.T) {
	for _, tc := range []struct {
		in, ex, key string
		queue       bool
	}{{"orders", "", "orders", true}, {"amq.topic/a.b", "amq.topic", "a.b", false}, {"ex/k/with/slash", "ex", "k/with/slash", false}, {"/q", "", "q", false}} {
		ex, key, queue := ParseAddress(tc.in)
		if ex != tc.ex || key != tc.key || queue != tc.queue {
			t.Errorf("%q: %q %q %v", tc.in, ex, key, queue)
		}
	}
}
