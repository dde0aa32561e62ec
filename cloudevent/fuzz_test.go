package cloudevent

import (
	"bytes"
	"maps"
	"testing"
)

// sameEvent reports whether a and b have the same attributes and data.
func sameEvent(a, b *Event) bool {
	return a.ID == b.ID && a.Source == b.Source && a.Type == b.Type && a.Subject == b.Subject &&
		a.Time == b.Time && a.DataContentType == b.DataContentType && a.DataSchema == b.DataSchema &&
		maps.Equal(a.Extensions, b.Extensions) && bytes.Equal(a.Data, b.Data)
}

// checkDecoded checks what a decoder accepted: it encodes and decodes to
// the same event, and its RSB image maps back and forth losslessly.
func checkDecoded(t *testing.T, e *Event) {
	b, err := Marshal(e)
	if err != nil {
		t.Fatalf("Marshal of a decoded event: %v", err)
	}
	again, err := Unmarshal(b)
	if err != nil {
		t.Fatalf("Unmarshal of Marshal: %v\n%s", err, b)
	}
	if !sameEvent(e, again) {
		t.Fatalf("JSON round trip changed the event:\n%+v\n%+v", e, again)
	}
	ev, err := e.ToRSB()
	if err != nil {
		return
	}
	ce, err := FromRSB(ev)
	if err != nil {
		return // the "ce:" user infos may outgrow MaxValueBytes
	}
	back, err := ce.ToRSB()
	if err != nil || !ev.Equal(back) {
		t.Fatalf("RSB round trip: %v\n%+v\n%+v", err, ev, back)
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte(`{"specversion":"1.0","id":"1","source":"/s","type":"t","subject":"/a/","data":{"x":1}}`))
	f.Add([]byte(`{"specversion":"1.0","id":"1","source":"/s","type":"t","rsbsender":"11220000-0000-0000-0000-000000000000","rsbseq":"3","rsbempty":"data method","data_base64":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Unmarshal(b)
		if err != nil {
			return
		}
		checkDecoded(t, e)
	})
}

func FuzzUnmarshalBatch(f *testing.F) {
	f.Add([]byte(`[{"specversion":"1.0","id":"1","source":"/s","type":"t"},{"specversion":"1.0","id":"2","source":"/s","type":"t","datacontenttype":"text/plain","data":"hi"}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		events, err := UnmarshalBatch(b)
		if err != nil {
			return
		}
		out, err := MarshalBatch(events)
		if err != nil {
			t.Fatalf("MarshalBatch of a decoded batch: %v", err)
		}
		again, err := UnmarshalBatch(out)
		if err != nil || len(again) != len(events) {
			t.Fatalf("batch round trip: %v", err)
		}
		for i := range events {
			if !sameEvent(events[i], again[i]) {
				t.Fatalf("event %d changed", i)
			}
		}
	})
}
