package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/scope"
)

// fakeClock is a styleEnv clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func testEnv(c *fakeClock, tty bool) styleEnv {
	return styleEnv{tty: tty, start: c.t, now: c.now}
}

// eventOn is sampleEvent carrying text on sc.
func eventOn(sc, text string) *client.Event {
	ev := sampleEvent(text)
	ev.Scope = scope.MustParse(sc)
	return ev
}

// matchLines checks out line by line against regular expressions.
func matchLines(t *testing.T, out string, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if !regexp.MustCompile("^" + w + "$").MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %q", i, lines[i], w)
		}
	}
}

func TestColumnsStyle(t *testing.T) {
	var buf bytes.Buffer
	s := newStyles["columns"](styleEnv{})
	for _, txt := range []string{"one", "two"} {
		if err := s.event(&buf, sampleEvent(txt)); err != nil {
			t.Fatal(err)
		}
	}
	matchLines(t, buf.String(),
		`Time +Origin +Seq +Method +Scope +Wire schema +Size +Payload`,
		`\d\d:\d\d:\d\d\.\d{6}  d8fbfef4 +0  REQUEST   /a/b/ +utf-8-string +3  "one"`,
		`\d\d:\d\d:\d\d\.\d{6}  d8fbfef4 +0  REQUEST   /a/b/ +utf-8-string +3  "two"`)
}

func TestMetaDataStyle(t *testing.T) {
	out := formatted(t, formatMetaData, sampleEvent("secret payload"))
	for _, want := range []string{"Event 84f43861-433f-5253-afbb-a613a5e04d71\n", "  Scope         /a/b/\n",
		"  Size          14 bytes\n", "  Info who      me\n", "  Cause         d8fbfef4-4eb0-4c89-9716-c425ded3c527:9\n", "  Time stamp    "} {
		if !strings.Contains(out, want) {
			t.Errorf("meta-data output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret payload") {
		t.Errorf("meta-data style printed the payload:\n%s", out)
	}
}

func TestTimelineStyle(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	s := newStyles["timeline"](testEnv(clk, false))
	var buf bytes.Buffer
	step := func(d time.Duration, sc string) {
		clk.t = clk.t.Add(d)
		if err := s.event(&buf, eventOn(sc, "x")); err != nil {
			t.Fatal(err)
		}
	}
	step(0, "/a/")
	step(250*time.Millisecond, "/b/")
	step(1500*time.Millisecond, "/a/")
	for i := range timelineLanes + 1 {
		step(0, fmt.Sprintf("/many/s%d/", i))
	}
	lines := strings.Split(buf.String(), "\n")
	matchLines(t, strings.Join(lines[:5], "\n"),
		` +Time  Lanes +Scope`,
		` +\+0\.000000s  \*\.{15}  /a/`,
		` +\+0\.250000s  \.\*\.{14}  /b/`,
		` +~ 1\.5s pause`,
		` +\+1\.750000s  \*\.{15}  /a/`)
	if last := lines[len(lines)-2]; !strings.Contains(last, strings.Repeat(".", timelineLanes-1)+"+") {
		t.Errorf("scopes beyond the lanes do not share the last: %q", last)
	}
}

func TestMonitorStyle(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	for _, tty := range []bool{false, true} {
		s := newStyles["monitor"](testEnv(clk, tty)).(refresher)
		var buf bytes.Buffer
		for range 4 {
			_ = s.event(&buf, eventOn("/a/", "12345"))
		}
		_ = s.event(&buf, eventOn("/b/c/", "1"))
		if buf.Len() != 0 {
			t.Fatalf("monitor printed per event: %q", buf.String())
		}
		if err := s.refresh(&buf, clk.t.Add(2*time.Second), false); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.HasPrefix(out, clearScreen) != tty {
			t.Errorf("tty %v: clear-screen prefix wrong: %q", tty, out)
		}
		matchLines(t, strings.TrimPrefix(out, clearScreen),
			`\S+Z  2 scopes, 5 events`,
			`Scope +Events +Rate/s +Bytes +Bytes/s +Wire schema`,
			`/a/ +4 +2\.0 +20 +10\.0  utf-8-string`,
			`/b/c/ +1 +0\.5 +1 +0\.5  utf-8-string`)
		buf.Reset()
		// The rates are of the period since the previous refresh.
		_ = s.refresh(&buf, clk.t.Add(3*time.Second), true)
		if !regexp.MustCompile(`(?m)^/a/ +4 +0\.0 +20 +0\.0 `).MatchString(buf.String()) {
			t.Errorf("second refresh:\n%s", buf.String())
		}
	}
}

func TestMonitorBoundsScopes(t *testing.T) {
	m := newMonitor(styleEnv{start: time.Unix(0, 0)})
	for i := range maxStyleScopes + 10 {
		_ = m.event(nil, eventOn(fmt.Sprintf("/s%d/", i), "x"))
	}
	if len(m.scopes) != maxStyleScopes+1 || m.scopes[otherScopes].events != 10 {
		t.Fatalf("%d scopes kept, %v in the other row", len(m.scopes), m.scopes[otherScopes])
	}
}

func TestStatisticsStyle(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	s := newStyles["statistics"](testEnv(clk, false)).(refresher)
	var buf bytes.Buffer
	for range 3 {
		_ = s.event(&buf, sampleEvent("abcd")) // send and receive 1 µs apart
	}
	_ = s.refresh(&buf, clk.t.Add(time.Second), false)
	_ = s.event(&buf, sampleEvent("abcdefgh"))
	_ = s.refresh(&buf, clk.t.Add(3*time.Second), true)
	matchLines(t, buf.String(),
		`Time +Events +Rate/s +Bytes/s +Size +Latency`,
		`\d\d:\d\d:\d\d\.\d{6} +3 +3\.0 +12\.0 +4\.0 +1µs`,
		`\d\d:\d\d:\d\d\.\d{6} +1 +0\.5 +4\.0 +8\.0 +1µs`,
		`total +4 +1\.3 +6\.7 +5\.0 +1µs`)
}

func TestDiscardStyle(t *testing.T) {
	if out := formatted(t, discardEvent, sampleEvent("x")); out != "" {
		t.Fatalf("discard printed %q", out)
	}
}
