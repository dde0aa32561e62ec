package mqtt

import (
	"testing"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
)

// FuzzDecode feeds hostile MQTT messages to every format's decoder: it
// must never panic, and what it accepts must be a valid event carrying
// the broker extensions.
func FuzzDecode(f *testing.F) {
	var bin Message
	if err := Encode(&bin, bridge.FormatBinary, sample(), true); err != nil {
		f.Fatal(err)
	}
	var st Message
	if err := Encode(&st, bridge.FormatStructured, sample(), true); err != nil {
		f.Fatal(err)
	}
	var fr Message
	if err := Encode(&fr, bridge.FormatFrame, sample(), true); err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(bridge.FormatBinary), "a/b", "specversion", "1.0", "id", "x", bin.ContentType, bin.Payload)
	f.Add(uint8(bridge.FormatBinary), "a/b", "Bad-Name", "v", "source", "/s", "", []byte("x"))
	f.Add(uint8(bridge.FormatStructured), "a/b", "", "", "", "", "", st.Payload)
	f.Add(uint8(bridge.FormatStructured), "a b", "", "", "", "", "", []byte(`{"specversion":"1.0","id":`))
	f.Add(uint8(bridge.FormatFrame), "t", "", "", "", "", "", fr.Payload)
	f.Add(uint8(bridge.FormatRaw), "t/\x00", "", "", "", "", "", []byte{0xff, 0})
	f.Add(uint8(bridge.FormatBinary), "t", "specversion", "1.0", "type", "t", "application/cloudevents+json", []byte(`{}`))
	f.Fuzz(func(t *testing.T, format uint8, topic, k1, v1, k2, v2, ct string, payload []byte) {
		m := Message{Topic: topic, QoS: format % 3, Retain: format&4 != 0, ContentType: ct, Payload: payload,
			User: []UserProperty{{k1, v1}, {k2, v2}}}
		fm := bridge.Format(1 + int(format)%4)
		e, err := Decode(&m, fm, topic+"-1", bridgetest.At)
		if err != nil {
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("accepted an invalid event: %v", err)
		}
		if e.Extensions[ExtQoS] == "" {
			t.Fatal("no mqttqos extension")
		}
	})
}
