package main

import (
	"testing"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

func TestParseFilter(t *testing.T) {
	origin := notification.NewParticipantID()
	ev := &notification.Event{Scope: scope.MustParse("/a/b/"), Method: "REQUEST", WireSchema: "utf-8-string",
		Data: []byte("temperature 21"), ID: notification.EventID{SenderID: origin}}
	for _, tc := range []struct {
		spec string
		pass bool
		bad  bool
	}{
		{spec: "scope /a", pass: true},
		{spec: "scope=/a/b/", pass: true},
		{spec: "scope /c", pass: false},
		{spec: "method REQUEST", pass: true},
		{spec: `method ""`, pass: false},
		{spec: "method=", pass: false},
		{spec: "origin " + notification.FormatUUID(origin), pass: true},
		{spec: "origin " + notification.FormatUUID(notification.NewParticipantID()), pass: false},
		{spec: "wire-schema utf-8-string", pass: true},
		{spec: "schema bytes", pass: false},
		{spec: `regex "^temp.* [0-9]+$"`, pass: true},
		{spec: "REGEX humidity", pass: false},
		{spec: "scope a/b", bad: true},
		{spec: "origin nope", bad: true},
		{spec: "regex (", bad: true},
		{spec: "colour red", bad: true},
		{spec: "method", bad: true},
		{spec: `method "open`, bad: true},
		{spec: "", bad: true},
	} {
		f, err := parseFilter(tc.spec)
		if tc.bad {
			if err == nil {
				t.Errorf("parseFilter(%q) accepted", tc.spec)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseFilter(%q): %v", tc.spec, err)
			continue
		}
		if got := f(ev); got != tc.pass {
			t.Errorf("filter %q passed=%v, want %v", tc.spec, got, tc.pass)
		}
	}
}

func TestLoggerHidesIntrospection(t *testing.T) {
	hello := &notification.Event{Scope: scope.MustParse("/__rsb/introspection/participants/x/")}
	plain := &notification.Event{Scope: scope.MustParse("/a/")}
	for uri, want := range map[string][2]bool{
		"socket:/":                    {false, true},
		"socket:/__rsb/":              {true, true},
		"socket:/__rsb/introspection": {true, true},
	} {
		u, err := client.ParseURI(uri)
		if err != nil {
			t.Fatal(err)
		}
		f := visibleIn(u)
		if got := [2]bool{f(hello), f(plain)}; got != want {
			t.Errorf("%s: introspection/plain visible %v, want %v", uri, got, want)
		}
	}
}
