package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
	"github.com/rsbd/rsbd/scope"
)

// sampleEvent is a received event with every field set.
func sampleEvent(payload any) *client.Event {
	reg := client.DefaultConfig().Registry
	ev := &client.Event{Payload: payload}
	ev.Scope = scope.MustParse("/a/b/")
	ev.Method = "REQUEST"
	schema, data, err := reg.Serialize(payload)
	if err != nil {
		panic(err)
	}
	ev.WireSchema, ev.Data = schema, data
	sender, _ := notification.ParseUUID("d8fbfef4-4eb0-4c89-9716-c425ded3c527")
	ev.ID = notification.EventID{SenderID: sender}
	ev.Causes = []notification.EventID{{SenderID: sender, SequenceNumber: 9}}
	ev.MetaData = notification.MetaData{CreateTime: 1700000000000001, SendTime: 1700000000000002,
		ReceiveTime: 1700000000000003, DeliverTime: 1700000000000004}
	ev.MetaData.SetUserInfo("who", "me")
	ev.MetaData.SetUserTime("stamp", 1700000000000005)
	return ev
}

func formatted(t *testing.T, f formatter, ev *client.Event) string {
	t.Helper()
	var buf bytes.Buffer
	if err := f(&buf, ev); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestFormatDetailed(t *testing.T) {
	out := formatted(t, formatDetailed, sampleEvent("hello\nworld"))
	for _, want := range []string{
		"Event\n",
		"  Scope         /a/b/\n",
		"  Id            84f43861-433f-5253-afbb-a613a5e04d71\n", // the RSB specification's test vector
		"  Sequence      0\n",
		"  Method        REQUEST\n",
		"  Wire schema   utf-8-string\n",
		"  Origin        d8fbfef4-4eb0-4c89-9716-c425ded3c527\n",
		"  Causes        d8fbfef4-4eb0-4c89-9716-c425ded3c527:9\n",
		"  Create        " + client.Time(1700000000000001).Format(timeLayout) + "\n",
		"  Deliver       " + client.Time(1700000000000004).Format(timeLayout) + "\n",
		"  stamp         " + client.Time(1700000000000005).Format(timeLayout) + "\n",
		"Meta-data\n  who           me\n",
		"Payload: string, 11 bytes\n  hello\n  world\n",
		strings.Repeat("-", separatorWidth) + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("detailed output lacks %q:\n%s", want, out)
		}
	}
	bin := formatted(t, formatDetailed, sampleEvent([]byte("\x00\x01AB")))
	if !strings.Contains(bin, "Payload: bytes, 4 bytes\n  00000000  00 01 41 42") || !strings.Contains(bin, "|..AB|") {
		t.Errorf("binary payload:\n%s", bin)
	}
	big := formatted(t, formatDetailed, sampleEvent(make([]byte, hexdumpLimit+10)))
	if !strings.Contains(big, "... 10 more bytes") {
		t.Errorf("long payload not cut:\n%s", big[len(big)-200:])
	}
	void := formatted(t, formatDetailed, sampleEvent(nil))
	if !strings.Contains(void, "Payload: void, 0 bytes\n----") {
		t.Errorf("void payload:\n%s", void)
	}
}

func TestFormatCompact(t *testing.T) {
	out := formatted(t, formatCompact, sampleEvent("hi"))
	want := client.Time(1700000000000002).Format(timeLayout) + ` /a/b/ REQUEST utf-8-string d8fbfef4 2 "hi"` + "\n"
	if out != want {
		t.Errorf("compact:\n%q\nwant\n%q", out, want)
	}
	long := formatted(t, formatCompact, sampleEvent(strings.Repeat("x", 200)))
	if strings.Count(long, "\n") != 1 || !strings.HasSuffix(long, "…\n") || len([]rune(long)) > 200 {
		t.Errorf("long compact line: %q", long)
	}
}

func TestFormatPayload(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{{"text", "text\n"}, {int64(-3), "-3\n"}, {true, "true\n"}, {2.5, "2.5\n"}, {nil, ""},
		{[]byte{0, 0xff}, "\x00\xff"}, {scope.MustParse("/x"), "/x/\n"}} {
		if got := formatted(t, formatPayload, sampleEvent(tc.v)); got != tc.want {
			t.Errorf("payload of %#v = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestFormatJSON(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want any
		enc  string
	}{{"text", "text", ""}, {int64(7), 7.0, ""}, {false, false, ""}, {nil, nil, ""},
		{[]byte("hi"), "aGk=", "base64"}, {math.Inf(1), "+Inf", ""}} {
		out := formatted(t, formatJSON, sampleEvent(tc.v))
		if strings.Count(out, "\n") != 1 {
			t.Fatalf("not one line: %q", out)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if m["payload"] != tc.want || (tc.enc != "" && m["payload_encoding"] != tc.enc) {
			t.Errorf("payload %#v in %s", m["payload"], out)
		}
		ts, _ := m["timestamps"].(map[string]any)
		md, _ := m["meta_data"].(map[string]any)
		if m["scope"] != "/a/b/" || m["method"] != "REQUEST" || m["origin"] != "d8fbfef4-4eb0-4c89-9716-c425ded3c527" ||
			len(ts) != 5 || md["who"] != "me" {
			t.Errorf("json: %s", out)
		}
	}
}

func TestRenderProtoAndUndecoded(t *testing.T) {
	ev := sampleEvent(nil)
	ev.Payload = &introspection.Bye{Id: []byte{1}}
	ev.WireSchema = ".rsb.protocol.introspection.Bye"
	if r := renderPayload(ev); r.typeName != ev.WireSchema || !strings.Contains(r.text, "id:") {
		t.Errorf("proto payload rendered %+v", r)
	}
	ev = sampleEvent(nil)
	ev.Payload, ev.PayloadErr, ev.WireSchema, ev.Data = nil, notification.ErrUnknownSchema, "mystery", []byte{1, 2}
	if r := renderPayload(ev); r.binary == nil || r.typeName != "undecoded mystery" {
		t.Errorf("undecoded payload rendered %+v", r)
	}
}
