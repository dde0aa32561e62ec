package config

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

func TestSetGetSpellings(t *testing.T) {
	c := New()
	if err := c.Set("RSBD.Socket-Addr", ":1", "test"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rsbd.socket.addr", "rsbd.socket_addr", "RSBD_SOCKET_ADDR", " rsbd-socket-addr "} {
		if v, ok := c.Get(k); !ok || v.String != ":1" || v.Origin.String() != "test" {
			t.Errorf("Get(%q) = %+v, %v", k, v, ok)
		}
	}
	if err := c.Set("bad key", "x", "test"); !errors.Is(err, ErrSyntax) {
		t.Errorf("Set(bad key) = %v, want ErrSyntax", err)
	}
	if _, ok := c.Get("bad key"); ok {
		t.Errorf("Get(bad key) found a value")
	}
	var zero Config
	if _, ok := zero.Get("a"); ok || len(zero.Keys()) != 0 {
		t.Errorf("zero Config not empty")
	}
	if err := zero.Set("a", "1", "x"); err != nil || zero.String("a", "") != "1" {
		t.Errorf("zero Config Set: %v", err)
	}
}

func TestSetDefault(t *testing.T) {
	c := New()
	if err := c.Set("a.b", "set", "flag --b"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetDefault("a.b", "def"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetDefault("a.c", "def"); err != nil {
		t.Fatal(err)
	}
	if got := c.String("a.b", ""); got != "set" {
		t.Errorf("SetDefault overrode a set value: %q", got)
	}
	if v, _ := c.Get("a.c"); v.String != "def" || v.Origin.Source != SourceDefault {
		t.Errorf("a.c = %+v", v)
	}
	if err := c.SetDefault("", "x"); !errors.Is(err, ErrSyntax) {
		t.Errorf("SetDefault(\"\") = %v", err)
	}
}

func TestOverrideHistoryBounded(t *testing.T) {
	c := New()
	for i := range 3 * MaxOverrideHistory {
		if err := c.Set("k", "v", "set "+strings.Repeat("x", i)); err != nil {
			t.Fatal(err)
		}
	}
	v, _ := c.Get("k")
	if len(v.Overrides) != MaxOverrideHistory {
		t.Errorf("history length %d, want %d", len(v.Overrides), MaxOverrideHistory)
	}
	if last := v.Overrides[len(v.Overrides)-1].Name; len(last) != 3*MaxOverrideHistory-2+len("set ") {
		t.Errorf("newest override %q is not the one just replaced", last)
	}
}

func TestSetFlags(t *testing.T) {
	fs := flag.NewFlagSet("rsbd", flag.ContinueOnError)
	fs.String("socket-addr", ":55555", "")
	fs.String("gossip-addr", ":7946", "")
	fs.Bool("multicast", true, "")
	fs.String("config", "", "")
	if err := fs.Parse([]string{"--socket-addr=127.0.0.1:9", "--multicast=false", "--config", "x.conf"}); err != nil {
		t.Fatal(err)
	}
	c := New()
	if err := c.SetFlags(fs, "config"); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get(KeySocketAddr); v.String != "127.0.0.1:9" || v.Origin.String() != "flag --socket-addr" {
		t.Errorf("socket addr = %+v", v)
	}
	if b, err := c.Bool(KeyMulticast, true); err != nil || b {
		t.Errorf("multicast = %v, %v", b, err)
	}
	if _, ok := c.Get(KeyGossipAddr); ok {
		t.Errorf("unset flag applied")
	}
	if _, ok := c.Get("rsbd.config"); ok {
		t.Errorf("skipped flag applied")
	}
}

func TestSub(t *testing.T) {
	c := New()
	for _, k := range []string{"rsbd.socket.addr", "rsbd.qos./a/", "rsbdx.y", "rsbd", "transport.socket.port"} {
		if err := c.Set(k, k, "t"); err != nil {
			t.Fatal(err)
		}
	}
	s := c.Sub("RSBD")
	if got := strings.Join(s.Keys(), ","); got != "qos./a/,socket.addr" {
		t.Errorf("Sub keys = %s", got)
	}
	if v, _ := s.Get("socket.addr"); v.String != "rsbd.socket.addr" || v.Origin.Name != "t" {
		t.Errorf("Sub value = %+v", v)
	}
	if err := c.Set("rsbd.join", "x", "t"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("join"); ok {
		t.Errorf("Sub is not a copy")
	}
	if len(c.Sub("bad key").Keys()) != 0 {
		t.Errorf("Sub of an invalid prefix not empty")
	}
}

func TestDump(t *testing.T) {
	tr := newTree(t)
	write(t, tr.system, "[transport.socket]\nport = 4444\n[rsbd]\nsocket.addr = :1\n")
	o := tr.opts("RSB_RSBD_SOCKET_ADDR=:2")
	o.Defaults = map[string]string{"introspection.enabled": "1", "rsbd.socket.addr": ":55555"}
	c := mustLoad(t, o)
	for k, v := range map[string]string{"rsbd.join": "a # b", "rsbd.note": " padded", "rsbd.tab": "a\tb"} {
		if err := c.Set(k, v, "flag --"+k[5:]); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := c.Dump(&buf); err != nil {
		t.Fatal(err)
	}
	want := "introspection.enabled = 1  # default\n" +
		"rsbd.join = \"a # b\"  # flag --join\n" +
		"rsbd.note = \" padded\"  # flag --note\n" +
		"rsbd.socket.addr = :2  # env RSB_RSBD_SOCKET_ADDR (overrides " + tr.system + ":4, default)\n" +
		"rsbd.tab = \"a\\tb\"  # flag --tab\n" +
		"transport.socket.port = 4444  # " + tr.system + ":2\n"
	if buf.String() != want {
		t.Errorf("Dump:\n%s\nwant:\n%s", buf.String(), want)
	}
	if err := c.Dump(failWriter{}); err == nil {
		t.Errorf("Dump ignored a write error")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestOriginString(t *testing.T) {
	tests := map[string]Origin{
		"default":            {Source: SourceDefault},
		"default (built-in)": {Source: SourceDefault, Name: "built-in"},
		"/etc/rsb.conf:3":    {Source: SourceFile, Name: "/etc/rsb.conf", Line: 3},
		"env RSB_X":          {Source: SourceEnv, Name: "RSB_X"},
		"flag --join":        {Source: SourceOverride, Name: "flag --join"},
		"override":           {Source: SourceOverride},
		"source(9)":          {Source: 9},
	}
	for want, o := range tests {
		if o.String() != want {
			t.Errorf("%#v.String() = %q, want %q", o, o.String(), want)
		}
	}
}
