package main

import (
	"testing"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
)

// FuzzDecodeIDL feeds decodeIDL the wire schema and payload of a received
// event, both from the network, with on-demand loading under testdata/idl:
// it must not panic, must load only files under the IDL path and must
// bound the files it tries.
func FuzzDecodeIDL(f *testing.F) {
	f.Add(".test.Pose", []byte{0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f})
	f.Add(".test.Pose", []byte{0xff, 0xff})
	f.Add(".test.Pose.Inner", []byte{})
	f.Add("..", []byte{})
	f.Add("./../../etc/passwd", []byte{})
	f.Add(".a.b.c.d.e.f", []byte{1})
	idl, err := (&idlFlags{paths: []string{"testdata/idl"}, onDemand: true}).load(bg())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, schema string, data []byte) {
		ev := &client.Event{PayloadErr: notification.ErrUnknownSchema}
		ev.WireSchema, ev.Data = schema, data
		out := decodeIDL(bg(), idl, ev)
		if out.Payload != nil && schema != ".test.Pose" {
			t.Fatalf("%q decoded as %T", schema, out.Payload)
		}
		if n := len(idl.tried); n > maxIDLFiles {
			t.Fatalf("%d files tried", n)
		}
	})
}
