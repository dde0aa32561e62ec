package amqp091

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
)

// FuzzDecode feeds hostile deliveries to every format's decoder: it must
// never panic, and what it accepts must be a valid event carrying the
// broker extensions.
func FuzzDecode(f *testing.F) {
	bin, _ := Encode(bridge.FormatBinary, bridgetest.Sample())
	st, _ := Encode(bridge.FormatStructured, bridgetest.Sample())
	fr, _ := Encode(bridge.FormatFrame, bridgetest.Sample())
	f.Add(uint8(bridge.FormatBinary), "cloudEvents:specversion", "1.0", "cloudEvents:id", "x", bin.ContentType, "", bin.Body)
	f.Add(uint8(bridge.FormatBinary), "cloudEvents_specversion", "1.0", "cloudEvents_Bad", "x", "", "m", []byte("x"))
	f.Add(uint8(bridge.FormatStructured), "", "", "", "", st.ContentType, "", st.Body)
	f.Add(uint8(bridge.FormatFrame), "", "", "", "", "", "", fr.Body)
	f.Add(uint8(bridge.FormatRaw), "", "", "", "", "", "\x00", []byte{0xff})
	f.Fuzz(func(t *testing.T, format uint8, k1, v1, k2, v2, ct, id string, body []byte) {
		d := Delivery{Queue: "q", RoutingKey: k2, Redelivered: format&8 != 0, MessageID: id, ContentType: ct,
			Headers: amqp.Table{k1: v1, k2: v2, "cloudEvents:n": int64(format)}, Body: body}
		e, err := Decode(&d, bridge.Format(1+int(format)%4), "q-1", bridgetest.At)
		if err != nil {
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("accepted an invalid event: %v", err)
		}
		if e.Extensions[ExtRedelivered] == "" {
			t.Fatal("no rabbitmqredelivered extension")
		}
	})
}
