package redis

import (
	"testing"
	"time"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// FuzzDecode feeds hostile stream entries and pub/sub payloads to the
// decoders in every format: no panic, and a decoded event is valid and
// encodes again.
func FuzzDecode(f *testing.F) {
	f.Add("ce_id", "1", "ce_source", "/s", []byte("{}"), uint8(bridge.FormatBinary), "1700000000000-0")
	f.Add("content-type", cloudevent.MediaType, "k", "v", []byte(`{"specversion":"1.0","id":"1","source":"/","type":"t"}`), uint8(bridge.FormatStructured), "x")
	f.Add("ce_Bad", "v", "", "", []byte{0xef, 1, 3}, uint8(bridge.FormatFrame), "-1-1")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, data []byte, fm uint8, id string) {
		f := bridge.Format(1 + fm%4)
		values := map[string]any{"ce_specversion": "1.0", "ce_type": "t", k1: v1, k2: v2, "data": string(data)}
		for _, m := range []bridge.Message{
			decodeEntry(f, entry{stream: "s", id: id, values: values}),
			decodeMessage(f, "c", data, time.Unix(1, 0)),
		} {
			if m.Event == nil {
				if m.Reason == "" || m.Position == "" {
					t.Fatalf("failure without reason or position: %+v", m)
				}
				continue
			}
			if err := m.Event.Validate(); err != nil {
				t.Fatalf("invalid event: %v", err)
			}
			if _, err := entryFields(f, m.Event); err != nil {
				t.Fatalf("decoded event does not encode: %v", err)
			}
		}
	})
}
