package nats

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// FuzzDecode feeds hostile messages to the decoder in every format: no
// panic, and a decoded event is valid and encodes again.
func FuzzDecode(f *testing.F) {
	e := &cloudevent.Event{ID: "1", Source: "/s", Type: "t", Data: []byte("{}")}
	m, _ := encode(bridge.FormatBinary, "s", e)
	f.Add("ce-id", "1", "ce-source", "/s", m.Data, uint8(bridge.FormatBinary), true)
	f.Add("content-type", cloudevent.MediaType, "k", "v", []byte(`{"specversion":"1.0","id":"1","source":"/","type":"t"}`), uint8(bridge.FormatStructured), false)
	f.Add("ce-Bad", "v", "", "", []byte{0xef, 1, 3}, uint8(bridge.FormatFrame), true)
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, data []byte, fm uint8, js bool) {
		f := bridge.Format(1 + fm%4)
		msg := &nats.Msg{Subject: "s", Data: data, Header: nats.Header{"ce-specversion": {"1.0"}, "ce-type": {"t"}}}
		msg.Header.Set(k1, v1)
		msg.Header.Set(k2, v2)
		p := position{at: time.Unix(3, 0)}
		if js {
			p.stream, p.seq = "S", 9
		}
		got := decode(f, msg, p)
		if got.Event == nil {
			if got.Reason == "" || got.Position == "" {
				t.Fatalf("failure without reason or position: %+v", got)
			}
			return
		}
		if err := got.Event.Validate(); err != nil {
			t.Fatalf("invalid event: %v", err)
		}
		if _, err := encode(f, "s", got.Event); err != nil {
			t.Fatalf("decoded event does not encode: %v", err)
		}
	})
}
