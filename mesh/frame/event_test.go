package frame

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
)

// randomEvent returns an RSB event with random id, scope, method, data and
// meta data.
func randomEvent(r *rand.Rand) *notification.Event {
	ev := testutil.Event(testutil.RandomScope(r).String(), r.Uint32(), nil)
	ev.ID.SenderID = notification.NewParticipantID()
	ev.Method = []string{"", "REQUEST", "REPLY"}[r.IntN(3)]
	ev.WireSchema = []string{"bytes", "utf-8-string", ".rsb.protocol.Hello", "void", ""}[r.IntN(5)]
	ev.Data = make([]byte, r.IntN(200))
	for i := range ev.Data {
		ev.Data[i] = byte(r.Uint32())
	}
	ev.MetaData.CreateTime, ev.MetaData.SendTime = r.Int64N(1<<52), r.Int64N(1<<52)
	if r.IntN(2) == 0 {
		ev.Causes = []notification.EventID{{SenderID: notification.NewParticipantID(), SequenceNumber: r.Uint32()}}
		ev.MetaData.SetUserInfo("rsb:error?", "boom\nline two")
		ev.MetaData.SetUserTime("stamp", r.Uint64())
	}
	ev.Present = notification.Presence(r.IntN(64))
	return ev
}

// TestRSBThroughFrames checks RSB events survive the EVENT frame: mapped,
// encoded, decoded and mapped back.
func TestRSBThroughFrames(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		ev := randomEvent(r)
		f, err := FromRSB(ev)
		if err != nil {
			t.Fatalf("event %d: FromRSB: %v", i, err)
		}
		b, err := Marshal(f)
		if err != nil {
			t.Fatalf("event %d: Marshal: %v", i, err)
		}
		g, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("event %d: Unmarshal: %v", i, err)
		}
		back, err := g.RSB()
		if err != nil {
			t.Fatalf("event %d: RSB: %v", i, err)
		}
		if !ev.Equal(back) {
			t.Fatalf("event %d changed:\n in %+v\nout %+v", i, ev, back)
		}
	}
}

func TestCloudEventFrame(t *testing.T) {
	e := &cloudevent.Event{ID: "1", Source: "/s", Type: "t", Subject: "/a/", Data: []byte("x"),
		Extensions: map[string]string{"emttl": "500"}}
	f, err := FromCloudEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	want := []Attr{{"specversion", "1.0"}, {"id", "1"}, {"source", "/s"}, {"type", "t"}, {"subject", "/a/"}, {"emttl", "500"}}
	if len(f.Attrs) != len(want) || f.Type != Event {
		t.Fatalf("attrs %+v", f.Attrs)
	}
	for i := range want {
		if f.Attrs[i] != want[i] {
			t.Errorf("attr %d = %+v, want %+v", i, f.Attrs[i], want[i])
		}
	}
	f.Attrs = append(f.Attrs, Attr{"datacontentencoding", "base64"}, Attr{"id", "2"})
	back, err := f.CloudEvent()
	if err != nil {
		t.Fatal(err)
	}
	if back.ID != "2" || back.Extensions["emttl"] != "500" || len(back.Extensions) != 1 {
		t.Errorf("back %+v", back)
	}
	for _, tc := range []struct {
		f    *Frame
		want error
	}{
		{&Frame{Type: StreamChunk}, ErrNotEvent},
		{&Frame{Type: Event, Attrs: []Attr{{"specversion", "0.3"}}}, cloudevent.ErrSpecVersion},
		{&Frame{Type: Event, Attrs: []Attr{{"replyTo", "x"}}}, cloudevent.ErrNameChars},
		{&Frame{Type: Event, Attrs: []Attr{{"id", "1"}}}, cloudevent.ErrMissing},
	} {
		if _, err := tc.f.CloudEvent(); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.f, err, tc.want)
		}
	}
}

func TestExpired(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ts := cloudevent.FormatTime(at)
	for _, tc := range []struct {
		attrs   []Attr
		now     time.Time
		expired bool
		err     error
	}{
		{nil, at.Add(time.Hour), false, nil},
		{[]Attr{{"emttl", "1000"}}, at.Add(time.Hour), false, nil},
		{[]Attr{{"time", ts}, {"emttl", "1000"}}, at.Add(time.Second), false, nil},
		{[]Attr{{"time", ts}, {"emttl", "1000"}}, at.Add(time.Second + 1), true, nil},
		{[]Attr{{"time", ts}, {"emttl", "0"}}, at.Add(1), true, nil},
		{[]Attr{{"time", ts}, {"emttl", "9223372036854775807"}}, at.Add(1000 * time.Hour), false, nil},
		{[]Attr{{"time", ts}, {"emttl", "-1"}}, at, false, ErrBadTTL},
		{[]Attr{{"time", ts}, {"emttl", "soon"}}, at, false, ErrBadTTL},
		{[]Attr{{"time", "noon"}, {"emttl", "1"}}, at, false, ErrBadTTL},
	} {
		f := &Frame{Type: Event, Attrs: tc.attrs}
		got, err := f.Expired(tc.now)
		if got != tc.expired || !errors.Is(err, tc.err) {
			t.Errorf("%+v at %v: %v %v, want %v %v", tc.attrs, tc.now, got, err, tc.expired, tc.err)
		}
		e := &cloudevent.Event{Extensions: map[string]string{}}
		for _, a := range tc.attrs {
			_ = e.SetAttr(a.Name, a.Value)
		}
		if got, err := EventExpired(e, tc.now); got != tc.expired || !errors.Is(err, tc.err) {
			t.Errorf("event %+v at %v: %v %v, want %v %v", tc.attrs, tc.now, got, err, tc.expired, tc.err)
		}
	}
}
