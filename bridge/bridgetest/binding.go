package bridgetest

import (
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// At is the reception time the binding tests give a decoder: the time of
// an event whose message carries none.
var At = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// Formats are the formats a bridge writes and reads, for the tests that
// run one case each.
var Formats = []bridge.Format{bridge.FormatBinary, bridge.FormatStructured, bridge.FormatRaw, bridge.FormatFrame}

// Sample returns an event with every kind of attribute: the optional
// ones, an extension and JSON data.
func Sample() *cloudevent.Event {
	return &cloudevent.Event{
		ID: "e-1", Source: "/sensors/7", Type: "com.example.reading", Subject: "temp",
		Time: "2026-01-02T03:04:05.123456Z", DataContentType: "application/json",
		DataSchema: "https://example.com/schema", Extensions: map[string]string{"partitionkey": "k1"},
		Data: []byte(`{"c":21.5}`),
	}
}

// SeqEvent is Sample numbered i: id "seq-<i>", extension seq and data
// {"seq":<i>} in place of Sample's.
func SeqEvent(i int) *cloudevent.Event {
	e := Sample()
	e.ID = "seq-" + strconv.Itoa(i)
	e.Extensions = map[string]string{ExtSeq: strconv.Itoa(i)}
	e.Data = fmt.Appendf(nil, `{"seq":%d}`, i)
	return e
}

// SameEvent fails the test unless got is want with the extensions broker
// added: those a receiving binding sets from the message's broker fields
// (its topic, queue, routing key ...).
func SameEvent(t testing.TB, got, want *cloudevent.Event, broker map[string]string) {
	t.Helper()
	w := *want
	w.Extensions = maps.Clone(want.Extensions)
	if w.Extensions == nil {
		w.Extensions = map[string]string{}
	}
	maps.Copy(w.Extensions, broker)
	if got.ID != w.ID || got.Source != w.Source || got.Type != w.Type || got.Subject != w.Subject || got.Time != w.Time ||
		got.DataContentType != w.DataContentType || got.DataSchema != w.DataSchema || !maps.Equal(got.Extensions, w.Extensions) ||
		string(got.Data) != string(w.Data) {
		t.Fatalf("got  %+v\nwant %+v", got, &w)
	}
}

// Refused fails the test unless err, what a decoder returned for the
// malformed message of case name, is a refusal for reason want.
func Refused(t testing.TB, name string, err error, want bridge.Reason) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: decoded", name)
	}
	if r := bridge.ReasonOf(err); r != want {
		t.Errorf("%s: reason %s, want %s (%v)", name, r, want, err)
	}
}
