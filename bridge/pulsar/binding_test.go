package pulsar

import (
	"maps"
	"testing"
	"time"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/cloudevent"
)

const topic = "persistent://public/default/t"

// sameEvent fails unless got is want with the broker extensions.
func sameEvent(t *testing.T, got, want *cloudevent.Event, id string) {
	t.Helper()
	bridgetest.SameEvent(t, got, want, map[string]string{ExtTopic: topic, ExtMessageID: id})
}

func TestBinaryPropertiesAndKey(t *testing.T) {
	m, err := Encode(bridge.FormatBinary, bridgetest.Sample())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ce_specversion": "1.0", "ce_id": "e-1", "ce_source": "/sensors/7", "ce_type": "com.example.reading",
		"ce_subject": "temp", "ce_time": "2026-01-02T03:04:05.123456Z", "ce_dataschema": "https://example.com/schema",
		"ce_partitionkey": "k1", "content-type": "application/json"}
	if !maps.Equal(m.Properties, want) || m.Key != "k1" || string(m.Payload) != `{"c":21.5}` {
		t.Fatalf("message %+v", m)
	}
	got, err := Decode(&Delivery{Topic: topic, MessageID: "1:2:-1:0", Key: m.Key, Properties: m.Properties, Payload: m.Payload}, bridge.FormatBinary, bridgetest.At)
	if err != nil {
		t.Fatal(err)
	}
	sameEvent(t, got, bridgetest.Sample(), "1:2:-1:0")
}

func TestEveryFormatRoundTrips(t *testing.T) {
	for _, f := range []bridge.Format{bridge.FormatStructured, bridge.FormatFrame} {
		m, err := Encode(f, bridgetest.Sample())
		if err != nil {
			t.Fatal(err)
		}
		if m.Key != "k1" || m.Properties[PropContentType] != bridge.ContentType(f, bridgetest.Sample()) {
			t.Fatalf("%v: %+v", f, m)
		}
		got, err := Decode(&Delivery{Topic: topic, MessageID: "3:4:-1:0", Properties: m.Properties, Payload: m.Payload}, f, bridgetest.At)
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		sameEvent(t, got, bridgetest.Sample(), "3:4:-1:0")
	}
	m, _ := Encode(bridge.FormatRaw, bridgetest.Sample())
	if string(m.Payload) != `{"c":21.5}` || m.Properties[PropContentType] != "application/json" {
		t.Fatalf("raw %+v", m)
	}
}

func TestAttributelessMessages(t *testing.T) {
	pt := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	d := &Delivery{Topic: topic, MessageID: "7:8:-1:0", PublishTime: pt, Properties: map[string]string{"x": "y"}, Payload: []byte("hi")}
	got, err := Decode(d, bridge.FormatBinary, bridgetest.At)
	if err != nil {
		t.Fatal(err)
	}
	sameEvent(t, got, &cloudevent.Event{ID: "7:8:-1:0", Source: "/pulsar/public/default/t", Type: bridge.FallbackType,
		Time: cloudevent.FormatTime(pt), DataContentType: bridge.ContentText, Data: []byte("hi")}, "7:8:-1:0")
	d.PublishTime = time.Time{}
	if got, err = Decode(d, bridge.FormatRaw, bridgetest.At); err != nil || got.Time != cloudevent.FormatTime(bridgetest.At) {
		t.Fatalf("raw without a publish time: %+v %v", got, err)
	}
}

func TestMalformedMessagesNameTheirReason(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    bridge.Format
		d    Delivery
		want bridge.Reason
	}{
		{"bad json", bridge.FormatStructured, Delivery{Payload: []byte(`{"specversion":`)}, bridge.ReasonJSON},
		{"bad json by content type", bridge.FormatBinary, Delivery{Properties: map[string]string{"content-type": cloudevent.MediaType}, Payload: []byte(`{`)}, bridge.ReasonJSON},
		{"invalid extension name", bridge.FormatBinary, Delivery{Properties: map[string]string{"ce_specversion": "1.0", "ce_id": "1",
			"ce_source": "/s", "ce_type": "t", "ce_Bad-Name": "v"}}, bridge.ReasonAttribute},
		{"bad frame", bridge.FormatFrame, Delivery{Payload: []byte{0xef, 2}}, bridge.ReasonFrame},
	} {
		tc.d.Topic, tc.d.MessageID = topic, "1:1:-1:0"
		_, err := Decode(&tc.d, tc.f, bridgetest.At)
		bridgetest.Refused(t, tc.name, err, tc.want)
	}
}

func TestOpenChecksItsSettings(t *testing.T) {
	if _, err := Open(bridge.Settings{Name: "p", Kind: Kind, URL: "pulsar://127.0.0.1:1", Options: map[string]string{"nope": "1"}}); err == nil {
		t.Fatal("unknown option accepted")
	}
	b, err := Open(bridge.Settings{Name: "p", Kind: Kind, URL: "pulsar://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}
