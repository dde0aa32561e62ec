package cloudevent

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// randomText returns a short string of printable ASCII, a few non-ASCII
// letters and, when controls is set, control characters.
func randomText(r *rand.Rand, controls bool) string {
	alphabet := []rune("abcXYZ09 :/._-?\"\\éß€😀")
	if controls {
		alphabet = append(alphabet, '\n', '\t', 0, 0x7f, 0x85)
	}
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteRune(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// randomTime returns a timestamp in µs: often zero, sometimes far outside
// what RFC 3339 holds.
func randomTime(r *rand.Rand) int64 {
	switch r.IntN(5) {
	case 0:
		return 0
	case 1:
		return r.Int64() - r.Int64()
	default:
		return 1_700_000_000_000_000 + r.Int64N(1e15)
	}
}

// randomEvent returns an RSB event whose fields take values a CloudEvent
// can carry, with random presence bits.
func randomEvent(r *rand.Rand) *notification.Event {
	ev := &notification.Event{
		Scope:   testutil.RandomScope(r),
		ID:      notification.EventID{SenderID: notification.NewParticipantID(), SequenceNumber: r.Uint32()},
		Present: notification.Presence(r.IntN(64)),
	}
	ev.Method = []string{"", "", "REQUEST", "REPLY", randomText(r, false)}[r.IntN(5)]
	ev.WireSchema = []string{"", "utf-8-string", "ascii-string", "bytes", "void", ".rsb.protocol.Hello",
		"application/json", "text/plain; charset=UTF-8", "a/b/c", randomText(r, false)}[r.IntN(10)]
	switch r.IntN(4) {
	case 1:
		ev.Data = []byte(randomText(r, true))
	case 2:
		ev.Data = []byte(`{"a": [1, 2.5, "x"]}`)
	case 3:
		ev.Data = make([]byte, r.IntN(300))
		for i := range ev.Data {
			ev.Data[i] = byte(r.Uint32())
		}
	}
	for range r.IntN(3) {
		ev.Causes = append(ev.Causes, notification.EventID{SenderID: notification.NewParticipantID(), SequenceNumber: r.Uint32()})
	}
	m := &ev.MetaData
	m.CreateTime, m.SendTime, m.ReceiveTime, m.DeliverTime = randomTime(r), randomTime(r), randomTime(r), randomTime(r)
	for range r.IntN(4) {
		key := []string{"ce:source", "ce:type", "ce:id", "ce:dataschema", "ce:color", "ce:rsbseq", "rsb:error?", randomText(r, true)}[r.IntN(8)]
		m.UserInfos = append(m.UserInfos, notification.UserInfo{Key: key, Value: randomText(r, true)})
	}
	for range r.IntN(3) {
		m.UserTimes = append(m.UserTimes, notification.UserTime{Key: randomText(r, true), Time: r.Uint64()})
	}
	return ev
}

// TestRSBRoundTrip checks the mapping is lossless for random events, as a
// value and through the JSON format.
func TestRSBRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		ev := randomEvent(r)
		ce, err := FromRSB(ev)
		if err != nil {
			t.Fatalf("event %d: FromRSB: %v\n%+v", i, err, ev)
		}
		back, err := ce.ToRSB()
		if err != nil {
			t.Fatalf("event %d: ToRSB: %v\n%+v", i, err, ce)
		}
		if !ev.Equal(back) {
			t.Fatalf("event %d: round trip changed it:\n in %+v\n ce %+v\nout %+v", i, ev, ce, back)
		}
		b, err := Marshal(ce)
		if err != nil {
			t.Fatalf("event %d: Marshal: %v", i, err)
		}
		ce2, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("event %d: Unmarshal: %v\n%s", i, err, b)
		}
		if back, err = ce2.ToRSB(); err != nil || !ev.Equal(back) {
			t.Fatalf("event %d: JSON round trip: %v\n in %+v\n%s\nout %+v", i, err, ev, b, back)
		}
	}
}

func TestFromRSBMapping(t *testing.T) {
	sender := [16]byte{0x11, 0x22}
	ev := &notification.Event{
		Scope: scope.MustParse("/robot/arm/"), Method: "REQUEST", WireSchema: "utf-8-string",
		Data: []byte("hello"), ID: notification.EventID{SenderID: sender, SequenceNumber: 7},
		MetaData: notification.MetaData{CreateTime: 1_700_000_000_123_456, SendTime: 1_700_000_000_123_999},
	}
	ce, err := FromRSB(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"id": notification.FormatUUID(ev.ID.UUID()), "source": "urn:uuid:11220000-0000-0000-0000-000000000000",
		"type": DefaultType, "subject": "/robot/arm/", "time": "2023-11-14T22:13:20.123456Z",
		"datacontenttype": "text/plain; charset=utf-8", "rsbmethod": "REQUEST", "rsbseq": "7",
		"rsbsender": "11220000-0000-0000-0000-000000000000", "rsbsendtime": "1700000000123999",
		"specversion": "1.0",
	}
	got := map[string]string{}
	for _, a := range ce.Attrs() {
		got[a.Name] = a.Value
	}
	if len(got) != len(want) {
		t.Errorf("attributes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// TestForeignEvent checks a CloudEvent from outside keeps its attributes
// through RSB as "ce:" user infos.
func TestForeignEvent(t *testing.T) {
	ce := &Event{
		ID: "A234-1234-1234", Source: "https://example.com/sensors", Type: "com.example.reading",
		Subject: "/robot/", Time: "2024-05-01T10:00:00.5Z", DataContentType: "application/json",
		DataSchema: "https://example.com/schema", Extensions: map[string]string{"color": "red", "rsbmethod": "REQUEST"},
		Data: []byte(`{"v":1}`),
	}
	ev, err := ce.ToRSB()
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != (notification.EventID{}) || ev.Method != "REQUEST" || ev.WireSchema != "application/json" {
		t.Errorf("event %+v", ev)
	}
	for k, v := range map[string]string{"ce:id": ce.ID, "ce:source": ce.Source, "ce:type": ce.Type,
		"ce:dataschema": ce.DataSchema, "ce:color": "red"} {
		if got, _ := ev.MetaData.UserInfo(k); got != v {
			t.Errorf("user info %s = %q, want %q", k, got, v)
		}
	}
	if ev.MetaData.CreateTime != 1_714_557_600_500_000 {
		t.Errorf("create time %d", ev.MetaData.CreateTime)
	}
	ev.ID = notification.EventID{SenderID: [16]byte{9}, SequenceNumber: 1} // as an informer assigns
	back, err := FromRSB(ev)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID != ce.ID || back.Source != ce.Source || back.Type != ce.Type || back.DataSchema != ce.DataSchema ||
		back.Extensions["color"] != "red" || back.Time != "2024-05-01T10:00:00.500000Z" {
		t.Errorf("back %+v", back)
	}
}

func TestToRSBErrors(t *testing.T) {
	base := func() *Event {
		return &Event{ID: "1", Source: "/s", Type: "t", Subject: "/a/", Extensions: map[string]string{}}
	}
	for _, tc := range []struct {
		name string
		mod  func(e *Event)
		want error
	}{
		{"no subject", func(e *Event) { e.Subject = "" }, ErrNoScope},
		{"bad scope", func(e *Event) { e.Subject = "a b" }, ErrNoScope},
		{"sender alone", func(e *Event) { e.Extensions[ExtSender] = "11220000-0000-0000-0000-000000000000" }, ErrRSB},
		{"bad seq", func(e *Event) {
			e.Extensions[ExtSender], e.Extensions[ExtSeq] = "11220000-0000-0000-0000-000000000000", "-1"
		}, ErrRSB},
		{"bad cause", func(e *Event) { e.Extensions[ExtCauses] = "x:1" }, ErrRSB},
		{"bad infos", func(e *Event) { e.Extensions[ExtUserInfos] = `[["a"]]` }, ErrRSB},
		{"bad times", func(e *Event) { e.Extensions[ExtUserTimes] = `[["a",-1]]` }, ErrRSB},
		{"bad time ext", func(e *Event) { e.Extensions[ExtSendTime] = "soon" }, ErrRSB},
		{"bad empty", func(e *Event) { e.Extensions[ExtEmpty] = "method  data" }, ErrRSB},
		{"missing type", func(e *Event) { e.Type = "" }, ErrMissing},
	} {
		e := base()
		tc.mod(e)
		if _, err := e.ToRSB(); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestFromRSBRefusesWhatNoCloudEventCarries(t *testing.T) {
	ev := testutil.Event("/a/", 1, nil)
	ev.Method = "\xff"
	if _, err := FromRSB(ev); !errors.Is(err, ErrRSB) {
		t.Errorf("invalid UTF-8: %v", err)
	}
	ev.Method = "a\nb"
	if _, err := FromRSB(ev); !errors.Is(err, ErrBadValue) {
		t.Errorf("control character: %v", err)
	}
	ev.Method = ""
	ev.MetaData.SetUserInfo("big", strings.Repeat("x", MaxValueBytes))
	if _, err := FromRSB(ev); !errors.Is(err, ErrValueTooLong) {
		t.Errorf("long user info: %v", err)
	}
}
