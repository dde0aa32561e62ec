package filter

import (
	"errors"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/cloudevent"
)

func TestMatch(t *testing.T) {
	e := &cloudevent.Event{ID: "1", Source: "https://example.com/arm", Type: "com.example.moved",
		Subject: "/robot/arm/", Extensions: map[string]string{"color": "red", "rsbmethod": "REQUEST"}}
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		{``, true},
		{`[]`, true},
		{`{"exact":{"type":"com.example.moved"}}`, true},
		{`{"exact":{"type":"com.example.Moved"}}`, false},
		{`{"prefix":{"type":"com.example."}}`, true},
		{`{"prefix":{"type":"org."}}`, false},
		{`{"suffix":{"source":"/arm"}}`, true},
		{`{"exact":{"specversion":"1.0"}}`, true},
		{`{"exact":{"color":"red","rsbmethod":"REQUEST"}}`, true},
		{`{"exact":{"color":"red","rsbmethod":"REPLY"}}`, false},
		{`{"exact":{"dataschema":""}}`, false},
		{`{"prefix":{"missing":""}}`, false},
		{`[{"prefix":{"subject":"/robot/"}},{"exact":{"color":"red"}}]`, true},
		{`[{"prefix":{"subject":"/robot/"}},{"exact":{"color":"blue"}}]`, false},
		{`{"all":[{"prefix":{"type":"com."}},{"suffix":{"subject":"/arm/"}}]}`, true},
		{`{"all":[{"prefix":{"type":"com."}},{"suffix":{"subject":"/leg/"}}]}`, false},
		{`{"any":[{"exact":{"color":"blue"}},{"exact":{"color":"red"}}]}`, true},
		{`{"any":[]}`, false},
		{`{"all":[]}`, true},
		{`{"not":{"exact":{"color":"red"}}}`, false},
		{`{"not":{"not":{"exact":{"color":"red"}}}}`, true},
	} {
		f, err := Parse([]byte(tc.filter))
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		if got := f.Match(e); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.filter, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat(`{"not":`, MaxDepth+1) + `{"exact":{"a":"b"}}` + strings.Repeat(`}`, MaxDepth+1)
	many := "[" + strings.Repeat(`{"exact":{"a":"b"}},`, MaxExpressions) + `{"exact":{"a":"b"}}]`
	for _, tc := range []struct {
		in   string
		want error
	}{
		{`{`, ErrSyntax},
		{`1`, ErrSyntax},
		{`{}`, ErrSyntax},
		{`{"exact":{"a":"b"},"prefix":{"a":"b"}}`, ErrSyntax},
		{`{"exact":{}}`, ErrSyntax},
		{`{"exact":{"a":1}}`, ErrSyntax},
		{`{"exact":{"Type":"x"}}`, ErrSyntax},
		{`{"all":{"exact":{"a":"b"}}}`, ErrSyntax},
		{`{"not":[]}`, ErrSyntax},
		{`{"regex":{"a":"b"}}`, ErrSyntax},
		{`{"sql":"type = 'x'"}`, ErrUnsupported},
		{deep, ErrSyntax},
		{many, ErrSyntax},
		{strings.Repeat(" ", MaxInputBytes+1), ErrSyntax},
	} {
		if _, err := Parse([]byte(tc.in)); !errors.Is(err, tc.want) {
			t.Errorf("%.60s: %v, want %v", tc.in, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`[{"all":[{"prefix":{"type":"com."}},{"not":{"exact":{"color":"red"}}}]},{"any":[{"suffix":{"subject":"/"}}]}]`))
	e := &cloudevent.Event{ID: "1", Source: "/s", Type: "com.t", Subject: "/a/", Extensions: map[string]string{"color": "red"}}
	f.Fuzz(func(t *testing.T, b []byte) {
		flt, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		flt.Match(e)
	})
}
