package bridge_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/cloudevent"
)

// FuzzDecodeValue feeds hostile message values to every broker-neutral
// format: no panic, and an event decoded is valid and encodes again.
func FuzzDecodeValue(f *testing.F) {
	e := bridgetest.Event(1, 40)
	for _, fm := range []bridge.Format{bridge.FormatStructured, bridge.FormatFrame} {
		v, _ := bridge.EncodeValue(fm, e)
		f.Add(v)
	}
	f.Add([]byte(`{"specversion":"1.0","id":"x","source":"/s","type":"t","data":1}`))
	f.Add([]byte{0xef, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte("plain"))
	fb := func(v []byte) *cloudevent.Event { return bridge.Fallback("k", "t", "t-0-1", time.Unix(1, 0), "", v) }
	f.Fuzz(func(t *testing.T, v []byte) {
		for _, fm := range []bridge.Format{bridge.FormatStructured, bridge.FormatFrame, bridge.FormatRaw} {
			got, err := bridge.DecodeValue(fm, v, fb)
			if err != nil {
				_ = bridge.ReasonOf(err)
				continue
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("%s decoded an invalid event: %v", fm, err)
			}
			if _, err := bridge.EncodeValue(bridge.FormatStructured, got); err != nil {
				t.Fatalf("%s: decoded event does not encode: %v", fm, err)
			}
		}
	})
}

// FuzzFromBinary feeds hostile headers to the binary-mode reader: no
// panic, and an event read keeps the data and is valid.
func FuzzFromBinary(f *testing.F) {
	attrs, ct := bridge.BinaryAttrs(bridgetest.Event(2, 10), "ce_")
	var seed []byte
	for _, a := range attrs {
		seed = append(seed, a.Name...)
		seed = append(seed, 0)
		seed = append(seed, a.Value...)
		seed = append(seed, 0)
	}
	f.Add(seed, ct, []byte("{}"))
	f.Add([]byte("ce_specversion\x001.0\x00ce_id\x00\x00"), "", []byte{})
	f.Fuzz(func(t *testing.T, hdrs []byte, ct string, data []byte) {
		parts := bytes.Split(hdrs, []byte{0})
		var h []cloudevent.Attr
		for i := 0; i+1 < len(parts); i += 2 {
			h = append(h, cloudevent.Attr{Name: string(parts[i]), Value: string(parts[i+1])})
		}
		e, ok, err := bridge.FromBinary(h, "ce_", ct, data)
		if err != nil || !ok {
			return
		}
		if e.Validate() != nil || !bytes.Equal(e.Data, data) {
			t.Fatalf("bad event %+v", e)
		}
	})
}
