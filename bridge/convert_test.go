package bridge_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

func TestBusRoundTripKeepsAttributes(t *testing.T) {
	for _, e := range []*cloudevent.Event{
		bridgetest.Event(7, 100),
		{ID: "1", Source: "/s", Type: "t", DataContentType: "text/plain", Data: []byte("hi")},
		bridge.Fallback("kafka", "orders", "orders-0-12", time.Unix(1700000000, 0), "", []byte{0, 1, 2}),
	} {
		ev, err := bridge.ToBus(e, scope.MustParse("/a/b/"), "k1")
		if err != nil {
			t.Fatal(err)
		}
		if ev.Scope.String() != "/a/b/" {
			t.Errorf("scope %s", ev.Scope)
		}
		if _, err := bridge.FromBus(ev, "k1"); !errors.Is(err, bridge.ErrCycle) {
			t.Errorf("same bridge: %v, want ErrCycle", err)
		}
		got, err := bridge.FromBus(ev, "other")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, e)
		}
	}
}

func TestFromBusOfRSBEvent(t *testing.T) {
	ev := &notification.Event{Scope: scope.MustParse("/r/"), WireSchema: "utf-8-string", Data: []byte("x"),
		ID: notification.EventID{SenderID: [16]byte{1}, SequenceNumber: 3}}
	e, err := bridge.FromBus(ev, "b")
	if err != nil {
		t.Fatal(err)
	}
	if e.Subject != "/r/" || e.Extensions[cloudevent.ExtSeq] != "3" || e.Type != cloudevent.DefaultType {
		t.Errorf("RSB event out: %+v", e)
	}
}

func TestFormats(t *testing.T) {
	e := bridgetest.Event(3, 50)
	fb := func(v []byte) *cloudevent.Event { return bridge.Fallback("k", "t", "t-1", time.Time{}, "", v) }
	for _, f := range []bridge.Format{bridge.FormatStructured, bridge.FormatFrame} {
		v, err := bridge.EncodeValue(f, e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := bridge.DecodeValue(f, v, fb)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("%s:\n got %+v\nwant %+v", f, got, e)
		}
	}
	js, _ := cloudevent.Marshal(e)
	if got, err := bridge.DecodeValue(bridge.FormatFrame, js, fb); err != nil || got.ID != e.ID {
		t.Errorf("frame's JSON fallback: %v %v", got, err)
	}
	raw, _ := bridge.EncodeValue(bridge.FormatRaw, e)
	got, err := bridge.DecodeValue(bridge.FormatRaw, raw, fb)
	if err != nil || got.ID != "t-1" || got.Source != "/k/t" || got.Type != bridge.FallbackType || got.DataContentType != bridge.ContentJSON {
		t.Errorf("raw: %+v %v", got, err)
	}
	for in, want := range map[string]bridge.Reason{"{": bridge.ReasonJSON, "\xef\x01": bridge.ReasonFrame} {
		_, err := bridge.DecodeValue(bridge.FormatFrame, []byte(in), fb)
		if r := bridge.ReasonOf(err); r != want {
			t.Errorf("%q: reason %s (%v), want %s", in, r, err, want)
		}
	}
	for _, s := range []string{"", "binary", "structured", "raw", "frame"} {
		if f, err := bridge.ParseFormat(s); err != nil || (s != "" && f.String() != s) {
			t.Errorf("ParseFormat(%q) = %v, %v", s, f, err)
		}
	}
	if _, err := bridge.ParseFormat("xml"); !errors.Is(err, bridge.ErrSettings) {
		t.Errorf("ParseFormat(xml): %v", err)
	}
}

func TestGuessContentType(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`: bridge.ContentJSON, `42`: bridge.ContentJSON, "héllo\nworld": bridge.ContentText,
		"\x00\x01": bridge.ContentBytes, "\xff": bridge.ContentBytes, "": bridge.ContentBytes,
	} {
		if got := bridge.GuessContentType([]byte(in)); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

func TestBinary(t *testing.T) {
	e := bridgetest.Event(1, 20)
	attrs, ct := bridge.BinaryAttrs(e, "ce_")
	if ct != "application/json" || attrs[0] != (cloudevent.Attr{Name: "ce_specversion", Value: "1.0"}) {
		t.Fatalf("attrs %v ct %s", attrs, ct)
	}
	attrs = append(attrs, cloudevent.Attr{Name: "other", Value: "x"})
	got, ok, err := bridge.FromBinary(attrs, "CE_", ct, e.Data)
	if err != nil || !ok || !reflect.DeepEqual(got, e) {
		t.Fatalf("FromBinary: %+v %v %v", got, ok, err)
	}
	if _, ok, err := bridge.FromBinary([]cloudevent.Attr{{Name: "k", Value: "v"}}, "ce_", "", nil); ok || err != nil {
		t.Errorf("no attributes: ok %v err %v", ok, err)
	}
	bad := append(attrs, cloudevent.Attr{Name: "ce_Bad-Name", Value: "x"})
	if _, _, err := bridge.FromBinary(bad, "ce_", ct, nil); bridge.ReasonOf(err) != bridge.ReasonAttribute {
		t.Errorf("invalid extension name: %v", err)
	}
}
