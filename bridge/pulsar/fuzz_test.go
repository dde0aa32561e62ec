package pulsar

import (
	"testing"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
)

// FuzzDecode feeds hostile messages to every format's decoder: it must
// never panic, and what it accepts must be a valid event carrying the
// broker extensions.
func FuzzDecode(f *testing.F) {
	bin, _ := Encode(bridge.FormatBinary, bridgetest.Sample())
	st, _ := Encode(bridge.FormatStructured, bridgetest.Sample())
	fr, _ := Encode(bridge.FormatFrame, bridgetest.Sample())
	f.Add(uint8(bridge.FormatBinary), "ce_specversion", "1.0", "ce_id", "x", bin.Properties["content-type"], "1:2:-1:0", bin.Payload)
	f.Add(uint8(bridge.FormatBinary), "ce_specversion", "1.0", "ce_Bad", "x", "", "", []byte("x"))
	f.Add(uint8(bridge.FormatStructured), "", "", "", "", st.Properties["content-type"], "m", st.Payload)
	f.Add(uint8(bridge.FormatFrame), "", "", "", "", "", "m", fr.Payload)
	f.Add(uint8(bridge.FormatRaw), "", "", "", "", "", "\x00", []byte{0xff})
	f.Fuzz(func(t *testing.T, format uint8, k1, v1, k2, v2, ct, id string, payload []byte) {
		d := Delivery{Topic: topic, MessageID: id, Properties: map[string]string{k1: v1, k2: v2, "content-type": ct}, Payload: payload}
		e, err := Decode(&d, bridge.Format(1+int(format)%4), bridgetest.At)
		if err != nil {
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("accepted an invalid event: %v", err)
		}
		if e.Extensions[ExtTopic] != topic {
			t.Fatal("no pulsartopic extension")
		}
	})
}
