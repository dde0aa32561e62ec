package main

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/config"
	"github.com/rsbd/rsbd/scope"
)

func testSources(stdin string) specSources {
	return specSources{
		stdin: strings.NewReader(stdin),
		readFile: func(name string) ([]byte, error) {
			switch name {
			case "text.txt":
				return []byte("file text"), nil
			case "bin":
				return []byte{0xff, 0}, nil
			}
			return nil, os.ErrNotExist
		},
	}
}

func TestParseEventSpec(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		stdin string
		want  any // error when it is an error
	}{
		{"", "", nil},
		{"true", "", true},
		{"false", "", false},
		{`"hello"`, "", "hello"},
		{`""`, "", ""},
		{`"say \"hi\" \\o/"`, "", `say "hi" \o/`},
		{`"grüße"`, "", "grüße"},
		{"42", "", int64(42)},
		{"-5", "", int64(-5)},
		{"+7", "", int64(7)},
		{"1.5", "", 1.5},
		{"-2e3", "", -2000.0},
		{".5", "", 0.5},
		{"/a/b", "", scope.MustParse("/a/b/")},
		{"/", "", scope.Root},
		{"-", "from stdin\n", "from stdin\n"},
		{"-:binary", "\x00\x01", []byte{0, 1}},
		{`#P"text.txt"`, "", "file text"},
		{`#P"text.txt":utf-8`, "", "file text"},
		{`#P"bin":binary`, "", []byte{0xff, 0}},
		{`#P"bin"`, "", errSpec}, // not UTF-8
		{`#P"missing"`, "", os.ErrNotExist},
		{`#P"text.txt":latin-1`, "", errSpec},
		{`#P""`, "", errSpec},
		{"-", "\xff", errSpec},
		{`"unterminated`, "", errSpec},
		{`"a"b`, "", errSpec},
		{`"\`, "", errSpec},
		{"hello", "", errSpec},
		{"inf", "", errSpec},
		{"NaN", "", errSpec},
		{"0x10", "", errSpec},
		{"99999999999999999999", "", 1e20},
		{"1e999", "", errSpec},
		{"/a//b", "", errSpec},
		{"pb:.rsb.protocol.EventId:{}", "", errSpec},
	} {
		got, err := parseEventSpec(tc.spec, testSources(tc.stdin))
		if want, isErr := tc.want.(error); isErr {
			if !errors.Is(err, want) && !(want == errSpec && err != nil) {
				t.Errorf("parseEventSpec(%q) = %v, %v; want error %v", tc.spec, got, err, want)
			}
			continue
		}
		if err != nil || !equalValue(got, tc.want) {
			t.Errorf("parseEventSpec(%q) = %#v, %v; want %#v", tc.spec, got, err, tc.want)
		}
	}
}

func equalValue(a, b any) bool {
	if ab, ok := a.([]byte); ok {
		bb, ok := b.([]byte)
		return ok && string(ab) == string(bb)
	}
	return a == b
}

// FuzzParseEventSpec checks that any spec either fails or yields a payload
// the default registry can publish.
func FuzzParseEventSpec(f *testing.F) {
	for _, s := range []string{"", "true", `"a\"b"`, "12", "-1.5e3", "/a/b", "-", "-:binary", `#P"text.txt"`,
		`#P"bin":binary`, `"`, "pb:x", "1e400"} {
		f.Add(s, "stdin")
	}
	reg := client.DefaultConfig().Registry
	f.Fuzz(func(t *testing.T, spec, stdin string) {
		v, err := parseEventSpec(spec, testSources(stdin))
		if err != nil {
			return
		}
		if _, _, err := reg.Serialize(v); err != nil {
			t.Fatalf("spec %q gave %#v, which does not serialize: %v", spec, v, err)
		}
	})
}

func TestParseCallSpec(t *testing.T) {
	def := client.DefaultURI()
	for _, tc := range []struct {
		in                  string
		addr, scope, method string
		arg                 string
		bad                 bool
	}{
		{in: "socket://h:1/svc/echo(\"hi\")", addr: "h:1", scope: "/svc/", method: "echo", arg: `"hi"`},
		{in: "socket:/svc/sub/m()", addr: "localhost:55555", scope: "/svc/sub/", method: "m"},
		{in: "/svc/m(1)", addr: "localhost:55555", scope: "/svc/", method: "m", arg: "1"},
		{in: "/m(1)", addr: "localhost:55555", scope: "/", method: "m", arg: "1"},
		{in: "socket:/m(true)", addr: "localhost:55555", scope: "/", method: "m", arg: "true"},
		{in: "socket://h:2/m(/a/b)", addr: "h:2", scope: "/", method: "m", arg: "/a/b"},
		{in: `/svc/m("(x)")`, addr: "localhost:55555", scope: "/svc/", method: "m", arg: `"(x)"`},
		{in: "/svc/m", bad: true},
		{in: "/svc/m(", bad: true},
		{in: "m()", bad: true},
		{in: "/svc/(1)", bad: true},
		{in: "/svc/a.b()", bad: true},
		{in: "spread:/svc/m()", bad: true},
		{in: "/a//m()", bad: true},
	} {
		got, err := parseCallSpec(tc.in, def)
		if tc.bad {
			if err == nil {
				t.Errorf("parseCallSpec(%q) = %+v, want error", tc.in, got)
			}
			continue
		}
		if err != nil || got.server.Addr() != tc.addr || got.server.Scope.String() != tc.scope || got.method != tc.method || got.arg != tc.arg {
			t.Errorf("parseCallSpec(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

// FuzzParseCallSpec checks that accepted call specs name a valid method on
// a valid server scope.
func FuzzParseCallSpec(f *testing.F) {
	for _, s := range []string{"/svc/m()", `socket://h:1/svc/echo("hi")`, "socket:/m(1)", "m()", "/(", "/a/b(c)d)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := parseCallSpec(s, client.DefaultURI())
		if err != nil {
			return
		}
		if !validComponent(cs.method) || cs.server.Scope.IsZero() {
			t.Fatalf("parseCallSpec(%q) accepted %+v", s, cs)
		}
		if _, err := scope.Parse(cs.server.Scope.String() + cs.method); err != nil {
			t.Fatalf("method scope of %q invalid: %v", s, err)
		}
	})
}

func TestParseArgs(t *testing.T) {
	o, err := parseSend([]string{"--method", "M", "-5", "-D", "a=1", "socket:/x", "--meta-data=b=2", "--cause",
		"d8fbfef4-4eb0-4c89-9716-c425ded3c527:3", "--timestamp", "t=2024-01-02T03:04:05Z"}, client.DefaultURI())
	if err != nil {
		t.Fatal(err)
	}
	if o.method != "M" || o.spec != "-5" || o.uri.Scope.String() != "/x/" || len(o.infos) != 2 ||
		o.infos[1] != [2]string{"b", "2"} || len(o.causes) != 1 || o.causes[0].SequenceNumber != 3 ||
		len(o.times) != 1 || o.times[0].Time != 1704164645000000 {
		t.Fatalf("parsed %+v", o)
	}
	for _, args := range [][]string{
		{}, {"a", "b", "c"}, {"--method"}, {"--bogus", "1"}, {"-D", "novalue", "1"}, {"--cause", "x:1", "1"},
		{"--timestamp", "t=yesterday", "1"}, {"1", "spread:/"},
	} {
		if _, err := parseSend(args, client.DefaultURI()); err == nil {
			t.Errorf("parseSend(%q) accepted", args)
		}
	}
	if _, err := parseSend([]string{"--help"}, client.DefaultURI()); !errors.Is(err, errHelp) {
		t.Errorf("--help: %v", err)
	}
	if o, err := parseSend([]string{"--", "--method"}, client.DefaultURI()); err != nil || o.spec != "--method" {
		t.Errorf("-- terminator: %+v %v", o, err)
	}
	if o, err := parseSend([]string{"-:binary", "-"}, client.DefaultURI()); err == nil {
		t.Errorf("'-' as URI accepted: %+v", o)
	}
}

func TestParseLoggerAndCall(t *testing.T) {
	def := client.URI{Scheme: "socket", Host: "example", Port: 7, Scope: scope.Root}
	o, err := parseLogger([]string{"-s", "json", "--stop-after", "3", "/a", "socket://h:9/b", "-f", "method REQUEST"}, def)
	if err != nil || o.stopAfter != 3 || len(o.uris) != 2 || o.uris[0].Addr() != "example:7" || o.uris[1].Addr() != "h:9" || len(o.filters) != 1 {
		t.Fatalf("parseLogger: %+v %v", o, err)
	}
	if o, err := parseLogger(nil, def); err != nil || len(o.uris) != 1 || o.uris[0].String() != "socket://example:7/" {
		t.Fatalf("default URI: %+v %v", o, err)
	}
	for _, args := range [][]string{{"--style", "fancy"}, {"--stop-after", "-1"}, {"-f", "colour red"}, {"--max-queued-events", "0"}, {"--max-queued-bytes", "-1"}} {
		if _, err := parseLogger(args, def); err == nil {
			t.Errorf("parseLogger(%q) accepted", args)
		}
	}
	if o, err := parseLogger([]string{"--max-queued-bytes", "1000"}, def); err != nil || o.bytes != 1000 || o.queue != defaultLoggerQueue {
		t.Fatalf("--max-queued-bytes: %+v %v", o, err)
	}
	if got := dropReport([]client.ListenerStats{{Dropped: 5, DroppedForBytes: 2}, {Dropped: 1}}); got != "rsb logger: 6 events dropped, the output not keeping up (4 over --max-queued-events, 2 over --max-queued-bytes)" {
		t.Errorf("dropReport: %q", got)
	}
	if got := dropReport([]client.ListenerStats{{Queued: 9}}); got != "" {
		t.Errorf("dropReport without drops: %q", got)
	}
	c, err := parseCall([]string{"-t", "250ms", "/svc/m(1)"}, def)
	if err != nil || c.timeout.Milliseconds() != 250 || c.spec.method != "m" || c.spec.server.Addr() != "example:7" {
		t.Fatalf("parseCall: %+v %v", c, err)
	}
	for _, args := range [][]string{{}, {"--timeout", "0s", "/s/m()"}, {"/s/m()", "/s/n()"}} {
		if _, err := parseCall(args, def); err == nil {
			t.Errorf("parseCall(%q) accepted", args)
		}
	}
}

func TestRunUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{{nil, exitUsage}, {[]string{"help"}, exitOK}, {[]string{"help", "send"}, exitOK}, {[]string{"nope"}, exitUsage},
		{[]string{"send"}, exitUsage}, {[]string{"logger", "--help"}, exitOK}, {[]string{"call", "x"}, exitUsage}} {
		if code := run(bg(), tc.args, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}); code != tc.code {
			t.Errorf("run(%q) = %d, want %d", tc.args, code, tc.code)
		}
	}
}

// TestSettingsFromConfig: the tools take host, port and the daemon's Unix
// socket from the RSB configuration.
func TestSettingsFromConfig(t *testing.T) {
	load := func(env ...string) settings {
		return settingsFrom(config.LoadOptions{Files: []string{}, Env: env, Logger: slog.New(slog.DiscardHandler)})
	}
	if st := load(); st.uri != client.DefaultURI() || !st.intro {
		t.Fatalf("defaults: %+v", st)
	}
	st := load("RSB_TRANSPORT_SOCKET_HOST=example.org", "RSB_TRANSPORT_SOCKET_PORT=4444",
		"RSB_TRANSPORT_SOCKET_PATH=/run/rsbd.sock", "RSB_INTROSPECTION_ENABLED=0")
	if st.uri.Host != "example.org" || st.uri.Port != 4444 || st.uri.Path != "/run/rsbd.sock" || st.intro {
		t.Fatalf("from the environment: %+v", st)
	}
	if got := st.uri.Addr(); got != "unix:/run/rsbd.sock" {
		t.Fatalf("the tools dial %q, want the Unix socket", got)
	}
}
