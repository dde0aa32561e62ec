package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/scope"
)

func TestParseBridgeSpec(t *testing.T) {
	def := client.DefaultURI()
	edges, err := parseBridgeSpec("socket://a:1/x -> |method M| |regex a;b->c| socket://b:2/y ; socket://c:3/ <-> /z", def)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, e := range edges {
		got = append(got, e.in.String()+" > "+e.out.String()+" "+strings.Join(e.filters, ","))
	}
	want := []string{
		"socket://a:1/x/ > socket://b:2/y/ method M,regex a;b->c",
		"socket://c:3/ > socket://localhost:55555/z/ ",
		"socket://localhost:55555/z/ > socket://c:3/ ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestBridgeSpecErrors(t *testing.T) {
	def := client.DefaultURI()
	for _, spec := range []string{
		"",
		"socket://a:1/x",
		"socket://a:1/x -> socket://b:1/y -> socket://c:1/",
		"socket://a:1/x -> |method M socket://b:1/y",
		"socket://a:1/x -> |colour red| socket://b:1/y",
		"socket://a:1/x -> socket://b:1/y socket://c:1/",
		"socket://a:1/x -> spread://b:1/y",
	} {
		if _, err := parseBridgeSpec(spec, def); err == nil {
			t.Errorf("%q accepted", spec)
		}
	}
}

func TestBridgeLoops(t *testing.T) {
	def := client.DefaultURI()
	for _, tc := range []struct {
		spec  string
		loops bool
	}{
		{"socket://a:1/ <-> socket://b:1/", false},
		{"socket://a:1/ -> socket://b:1/; socket://b:1/ -> socket://a:1/", false},
		{"socket://a:1/ <-> socket://b:1/; socket://b:1/ <-> socket://c:1/", false},
		{"socket://a:1/ -> socket://b:1/; socket://b:1/ -> socket://c:1/", false},
		{"socket://a:1/x -> socket://a:1/y", false},
		{"socket://a:1/x -> socket://a:1/x/y", true},
		{"socket://a:1/x/y -> socket://a:1/", true},
		{"socket://a:1/ -> socket://b:1/; socket://a:1/ -> socket://b:1/", true},
		{"socket://a:1/ -> socket://b:1/; socket://b:1/ -> socket://c:1/; socket://c:1/ -> socket://a:1/", true},
		{"socket://a:1/ <-> socket://b:1/; socket://b:1/s -> socket://c:1/; socket://c:1/ -> socket://a:1/t", true},
	} {
		_, err := parseBridgeSpec(tc.spec, def)
		if got := err != nil; got != tc.loops || err != nil && !errors.Is(err, errBridgeSpec) {
			t.Errorf("%q: %v, want loop %v", tc.spec, err, tc.loops)
		}
	}
}

func TestRelocate(t *testing.T) {
	for _, tc := range [][4]string{
		{"/x/", "/x/", "/y/", "/y/"},
		{"/x/a/b/", "/x/", "/y/z/", "/y/z/a/b/"},
		{"/a/", "/", "/y/", "/y/a/"},
		{"/x/a/", "/x/", "/", "/a/"},
	} {
		got := relocate(scope.MustParse(tc[0]), scope.MustParse(tc[1]), scope.MustParse(tc[2]))
		if got.String() != tc[3] {
			t.Errorf("relocate(%s, %s, %s) = %s, want %s", tc[0], tc[1], tc[2], got, tc[3])
		}
	}
}
