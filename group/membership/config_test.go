package membership

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/group"
)

func TestConfigDefaults(t *testing.T) {
	c := DefaultConfig()
	if c.BindAddr != DefaultBindAddr || c.BindPort != DefaultBindPort || c.DeadNodeReclaimTime != DefaultDeadNodeReclaimTime || c.Logger == nil {
		t.Fatalf("DefaultConfig = %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatal("zero Config:", err)
	}
	// Default names differ per daemon, even on one host.
	a, b := DefaultConfig().NodeName, DefaultConfig().NodeName
	if a == b || !strings.Contains(a, "-") || len(a) > MaxNodeNameLen {
		t.Fatalf("default names %q and %q", a, b)
	}
	mc := c.memberlistConfig()
	if mc.BindPort != DefaultBindPort || mc.AdvertisePort != DefaultBindPort || mc.Name != c.NodeName || mc.ProbeInterval != time.Second {
		t.Fatalf("LAN memberlist config: port %d/%d probe %v", mc.BindPort, mc.AdvertisePort, mc.ProbeInterval)
	}
}

func TestLocalConfig(t *testing.T) {
	c := LocalConfig()
	if !c.Local || c.BindPort != AnyPort || c.BindAddr != "127.0.0.1" || c.DeadNodeReclaimTime != LocalDeadNodeReclaimTime {
		t.Fatalf("LocalConfig = %+v", c)
	}
	mc := c.memberlistConfig()
	if mc.BindPort != 0 || mc.AdvertisePort != 0 || mc.ProbeInterval != LocalProbeInterval || mc.GossipInterval != LocalGossipInterval {
		t.Fatalf("Local memberlist config: port %d/%d probe %v gossip %v", mc.BindPort, mc.AdvertisePort, mc.ProbeInterval, mc.GossipInterval)
	}
	c.ProbeInterval, c.GossipInterval, c.PushPullInterval = 3*time.Second, time.Second, time.Minute
	c.AdvertisePort = 9999
	mc = c.memberlistConfig()
	if mc.ProbeInterval != 3*time.Second || mc.GossipInterval != time.Second || mc.PushPullInterval != time.Minute || mc.AdvertisePort != 9999 {
		t.Fatal("overrides not applied")
	}
}

func TestConfigValidate(t *testing.T) {
	bad := map[string]Config{
		"long name":        {NodeName: strings.Repeat("n", MaxNodeNameLen+1)},
		"bind port":        {BindPort: 65536},
		"negative port":    {BindPort: -2},
		"advertise port":   {AdvertisePort: -1},
		"bind addr":        {BindAddr: "localhost"},
		"advertise addr":   {AdvertiseAddr: "not-an-ip"},
		"key size":         {SecretKey: make([]byte, 10)},
		"label":            {Label: strings.Repeat("l", 256)},
		"negative probe":   {ProbeInterval: -time.Second},
		"negative reclaim": {DeadNodeReclaimTime: -1},
		"group":            {Group: group.Config{PoolSize: -1}},
	}
	for name, c := range bad {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Validate = %v, want ErrConfig", name, err)
		}
	}
	good := Config{BindPort: AnyPort, SecretKey: make([]byte, 32), Label: "rsbd", AdvertiseAddr: "::1"}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
}

// recordHandler keeps the records it handles.
type recordHandler struct {
	recs []slog.Record
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.recs = append(h.recs, r)
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

func TestMemberlistLogger(t *testing.T) {
	h := &recordHandler{}
	l := newMemberlistLogger(slog.New(h))
	l.Printf("[WARN] memberlist: Was able to connect to %s", "x")
	l.Printf("no level at all")
	if len(h.recs) != 2 {
		t.Fatalf("%d records", len(h.recs))
	}
	r := h.recs[0]
	attrs := map[string]string{}
	r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
	if r.Level != slog.LevelDebug || r.Message != "Was able to connect to x" || attrs["ml_level"] != "WARN" || attrs["component"] != "memberlist" {
		t.Fatalf("record %v %q %v", r.Level, r.Message, attrs)
	}
	if h.recs[1].Message != "no level at all" {
		t.Fatalf("plain line: %q", h.recs[1].Message)
	}
	// Nothing is formatted when debug is off.
	var buf bytes.Buffer
	quiet := newMemberlistLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	quiet.Printf("[ERR] memberlist: boom")
	if buf.Len() != 0 {
		t.Fatalf("debug line logged at info: %q", buf.String())
	}
}
