package amqp1

import (
	"testing"

	amqp "github.com/Azure/go-amqp"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
)

// FuzzDecode feeds hostile messages to every format's decoder: it must
// never panic, and what it accepts must be a valid event carrying
// amqpaddress. The message itself comes from the client library's own
// decoder, which go-amqp fuzzes; this target covers the mapping.
func FuzzDecode(f *testing.F) {
	bin, _ := Encode(bridge.FormatBinary, bridgetest.Sample())
	st, _ := Encode(bridge.FormatStructured, bridgetest.Sample())
	fr, _ := Encode(bridge.FormatFrame, bridgetest.Sample())
	f.Add(uint8(bridge.FormatBinary), "cloudEvents_specversion", "1.0", "cloudEvents_id", "x", *bin.Properties.ContentType, "", bin.Data[0])
	f.Add(uint8(bridge.FormatBinary), "cloudEvents:specversion", "1.0", "cloudEvents:Bad", "x", "", "m", []byte("x"))
	f.Add(uint8(bridge.FormatStructured), "", "", "", "", *st.Properties.ContentType, "", st.Data[0])
	f.Add(uint8(bridge.FormatFrame), "", "", "", "", "", "", fr.Data[0])
	f.Add(uint8(bridge.FormatRaw), "", "", "", "", "", "\x00", []byte{0xff})
	f.Fuzz(func(t *testing.T, format uint8, k1, v1, k2, v2, ct, id string, body []byte) {
		m := amqp.Message{Properties: &amqp.MessageProperties{ContentType: &ct}, Data: [][]byte{body},
			ApplicationProperties: map[string]any{k1: v1, k2: v2, "cloudEvents_n": int32(format)}}
		if id != "" {
			m.Properties.MessageID = id
		}
		e, err := Decode(&m, k2, bridge.Format(1+int(format)%4), "p-1", bridgetest.At)
		if err != nil {
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("accepted an invalid event: %v", err)
		}
	})
}
