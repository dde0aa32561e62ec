package cloudevent

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestMarshalDataForms(t *testing.T) {
	base := Event{ID: "1", Source: "/s", Type: "t"}
	for _, tc := range []struct {
		ct   string
		data string
		want string
	}{
		{"", `{"a":1}`, `,"data":{"a":1}}`},
		{"application/json", `[1, 2]`, `,"data":[1, 2]}`},
		{"application/cloudevents+json", `"x"`, `,"data":"x"}`},
		{"application/json", ` {"a":1}`, `,"data_base64":"IHsiYSI6MX0="}`},
		{"application/json", `{"a":`, `,"data_base64":"eyJhIjo="}`},
		{"text/plain", "héllo\n", `,"data":"h\u00e9llo\n"}`},
		{"text/plain", "\xff", `,"data_base64":"/w=="}`},
		{"application/octet-stream", "ab", `,"data_base64":"YWI="}`},
	} {
		e := base
		e.DataContentType, e.Data = tc.ct, []byte(tc.data)
		b, err := Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(b, []byte(tc.want)) {
			t.Errorf("%q %q: %s, want suffix %s", tc.ct, tc.data, b, tc.want)
		}
		back, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !bytes.Equal(back.Data, e.Data) {
			t.Errorf("%s: data %q, want %q", b, back.Data, e.Data)
		}
	}
}

func TestMarshalExact(t *testing.T) {
	e := &Event{ID: "1", Source: "/s", Type: "t", Subject: "/a/", Time: "2024-01-01T00:00:00Z",
		Extensions: map[string]string{"zeta": "é", "alpha": "1"}}
	b, err := Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"specversion":"1.0","id":"1","source":"/s","type":"t","subject":"/a/","time":"2024-01-01T00:00:00Z","alpha":"1","zeta":"\u00e9"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestUnmarshalAttributeTypes(t *testing.T) {
	e, err := Unmarshal([]byte(`{"specversion":"1.0","id":"1","source":"/s","type":"t","n":-42,"ok":true,"s":"x","z":null,"subject":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.Extensions["n"] != "-42" || e.Extensions["ok"] != "true" || e.Extensions["s"] != "x" || len(e.Extensions) != 3 || e.Subject != "" {
		t.Errorf("%+v", e)
	}
	e, err = Unmarshal([]byte(`{"specversion":"1.0","id":"1","source":"/s","type":"t","datacontenttype":"application/json","data":"x"}`))
	if err != nil || string(e.Data) != `"x"` {
		t.Errorf("JSON string data %q, %v", e.Data, err)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	const ok = `"specversion":"1.0","id":"1","source":"/s","type":"t"`
	for _, tc := range []struct {
		in   string
		want error
	}{
		{``, ErrJSON},
		{`[]`, ErrJSON},
		{`{` + ok, ErrJSON},
		{`{` + ok + `}x`, ErrJSON},
		{`{` + ok + `}{}`, ErrJSON},
		{`{"id":"1","source":"/s","type":"t"}`, ErrSpecVersion},
		{`{"specversion":"0.3","id":"1","source":"/s","type":"t"}`, ErrSpecVersion},
		{`{"specversion":"1.0","source":"/s","type":"t"}`, ErrMissing},
		{`{` + ok + `,"id":"2"}`, ErrJSON},
		{`{` + ok + `,"data":1,"data_base64":"AA=="}`, ErrJSON},
		{`{` + ok + `,"data_base64":"!!"}`, ErrJSON},
		{`{` + ok + `,"data_base64":1}`, ErrJSON},
		{`{` + ok + `,"Color":"x"}`, ErrNameChars},
		{`{` + ok + `,"averyveryverylongname1":"x"}`, ErrNameTooLong},
		{`{` + ok + `,"":"x"}`, ErrNameEmpty},
		{`{` + ok + `,"n":1.5}`, ErrBadValue},
		{`{` + ok + `,"n":2147483648}`, ErrBadValue},
		{`{` + ok + `,"o":{}}`, ErrJSON},
		{`{` + ok + `,"subject":1}`, ErrJSON},
		{`{` + ok + `,"subject":""}`, ErrEmptyValue},
		{`{` + ok + `,"time":"yesterday"}`, ErrBadValue},
		{`{` + ok + `,"dataschema":"relative"}`, ErrBadValue},
		{`{` + ok + `,"x":"a\u0001b"}`, ErrBadValue},
		{`{` + ok + `,"x":"` + strings.Repeat("a", MaxValueBytes+1) + `"}`, ErrValueTooLong},
	} {
		if _, err := Unmarshal([]byte(tc.in)); !errors.Is(err, tc.want) {
			t.Errorf("%.80s: %v, want %v", tc.in, err, tc.want)
		}
	}
}

func TestUnmarshalLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"specversion":"1.0","id":"1","source":"/s","type":"t"`)
	for i := range MaxAttributes {
		b.WriteString(`,"x` + strings.Repeat("a", i%10) + string(rune('a'+i/10)) + `":"v"`)
	}
	b.WriteString("}")
	if _, err := Unmarshal([]byte(b.String())); !errors.Is(err, ErrTooManyAttributes) {
		t.Errorf("too many attributes: %v", err)
	}
	if _, err := Unmarshal(make([]byte, MaxEventJSONBytes+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
	big := `{"specversion":"1.0","id":"1","source":"/s","type":"t","data_base64":"` +
		strings.Repeat("A", (MaxDataBytes+3)/3*4+4) + `"}`
	if _, err := Unmarshal([]byte(big)); !errors.Is(err, ErrDataTooLarge) {
		t.Errorf("data too large: %v", err)
	}
}

func TestBatch(t *testing.T) {
	events := []*Event{
		{ID: "1", Source: "/s", Type: "t", Data: []byte("{}")},
		{ID: "2", Source: "/s", Type: "t", DataContentType: "application/octet-stream", Data: []byte{0, 1}},
	}
	b, err := MarshalBatch(events)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalBatch(b)
	if err != nil || len(back) != 2 || back[1].ID != "2" || !bytes.Equal(back[1].Data, []byte{0, 1}) {
		t.Fatalf("%s: %v %+v", b, err, back)
	}
	if got, err := UnmarshalBatch([]byte(" [ ] ")); err != nil || len(got) != 0 {
		t.Errorf("empty batch: %v %v", got, err)
	}
	for _, in := range []string{`{}`, `[`, `[{}]`, `[1]`, `[] []`} {
		if _, err := UnmarshalBatch([]byte(in)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
	one := `{"specversion":"1.0","id":"1","source":"/s","type":"t"}`
	long := "[" + strings.Repeat(one+",", MaxBatchEvents) + one + "]"
	if _, err := UnmarshalBatch([]byte(long)); !errors.Is(err, ErrBatchTooLong) {
		t.Errorf("long batch: %v", err)
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]error{
		"a": nil, "abc123": nil, "12345678901234567890": nil, "": ErrNameEmpty,
		"123456789012345678901": ErrNameTooLong, "A": ErrNameChars, "a_b": ErrNameChars, "é": ErrNameChars,
	} {
		if err := ValidName(name); !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", name, err, want)
		}
	}
	e := &Event{}
	for _, name := range []string{"data", "id", "specversion"} {
		if err := e.SetExtension(name, "x"); !errors.Is(err, ErrNameReserved) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestValidString(t *testing.T) {
	for s, want := range map[string]bool{
		"": true, "abc é €": true, "😀": true, "a\nb": false, "\x7f": false, "\u0085": false,
		"\ufdd0": false, "\uffff": false, "\U0001fffe": false, "\xff": false, "\u00a0": true,
	} {
		if ValidString(s) != want {
			t.Errorf("%q: %v", s, !want)
		}
	}
}

func TestContentTypeWireSchema(t *testing.T) {
	for ws, ct := range map[string]string{
		"":                 "",
		"utf-8-string":     "text/plain; charset=utf-8",
		"ascii-string":     "text/plain; charset=us-ascii",
		"bytes":            "application/octet-stream",
		".rsb.Hello":       "application/x-protobuf; messagetype=.rsb.Hello",
		"void":             "application/vnd.rsb; wireschema=void",
		"application/json": "application/json",
	} {
		if got := ContentType(ws); got != ct {
			t.Errorf("ContentType(%q) = %q, want %q", ws, got, ct)
		}
		if got := WireSchema(ct); got != ws {
			t.Errorf("WireSchema(%q) = %q, want %q", ct, got, ws)
		}
	}
	if got := WireSchema("Text/Plain;Charset=UTF-8"); got != "utf-8-string" {
		t.Errorf("case-insensitive charset: %q", got)
	}
}
