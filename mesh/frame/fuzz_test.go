package frame

import (
	"bytes"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
)

// FuzzUnmarshal checks Unmarshal never panics and that every frame it
// accepts encodes back to the same bytes; an EVENT frame whose CloudEvent
// maps to an RSB event maps back to the same RSB event.
func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte{Magic, Version, byte(Event), 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 'x', 0, 0, 0, 1, 'y', 'z'})
	ev := testutil.Event("/robot/arm/", 7, []byte("payload"))
	ev.Method = "REQUEST"
	ev.MetaData.SetUserInfo("ce:color", "red")
	if fr, err := FromRSB(ev); err == nil {
		b, _ := Marshal(fr)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := Unmarshal(b)
		if err != nil {
			return
		}
		out, err := Marshal(fr)
		if err != nil {
			t.Fatalf("Marshal of a decoded frame: %v", err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("re-encoded\n%x\nwant\n%x", out, b)
		}
		ev, err := fr.RSB()
		if err != nil {
			return
		}
		back, err := FromRSB(ev)
		if err != nil {
			return // the "ce:" user infos may outgrow a value
		}
		again, err := back.RSB()
		if err != nil || !ev.Equal(again) {
			t.Fatalf("RSB round trip: %v\n%+v\n%+v", err, ev, again)
		}
	})
}
