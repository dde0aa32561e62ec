package kafka

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// FuzzDecode feeds hostile records to the decoder in every format: no
// panic, and a decoded event is valid and encodes again.
func FuzzDecode(f *testing.F) {
	e := &cloudevent.Event{ID: "1", Source: "/s", Type: "t", DataContentType: "text/plain", Data: []byte("hi"),
		Extensions: map[string]string{"x": "y"}}
	r, _ := encode(bridge.FormatBinary, "t", e)
	f.Add("ce_specversion", "1.0", "ce_id", "1", r.Value, uint8(bridge.FormatBinary))
	f.Add("content-type", cloudevent.MediaType, "k", "v", []byte(`{"specversion":"1.0","id":"1","source":"/","type":"t"}`), uint8(bridge.FormatStructured))
	f.Add("ce_Bad", "v", "", "", []byte{0xef, 1, 3}, uint8(bridge.FormatFrame))
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, value []byte, fm uint8) {
		f := bridge.Format(1 + fm%4)
		rec := &kgo.Record{Topic: "t", Partition: 2, Offset: 7, Timestamp: time.Unix(5, 0), Value: value,
			Headers: []kgo.RecordHeader{{Key: "ce_specversion", Value: []byte("1.0")}, {Key: k1, Value: []byte(v1)}, {Key: k2, Value: []byte(v2)}}}
		m := decode(f, rec)
		if m.Event == nil {
			if m.Reason == "" || m.Position != "t-2-7" {
				t.Fatalf("failure without reason or position: %+v", m)
			}
			return
		}
		if err := m.Event.Validate(); err != nil {
			t.Fatalf("invalid event: %v", err)
		}
		if _, err := encode(f, "t", m.Event); err != nil {
			t.Fatalf("decoded event does not encode: %v", err)
		}
	})
}
