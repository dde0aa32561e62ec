package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
)

// memRuns numbers the in-memory brokers, so that every test run (also
// with -count) has a fresh one.
var memRuns atomic.Int64

// newMem returns a fresh in-memory broker and a bridge's configuration on
// it.
func newMem(t *testing.T) (*memBroker, bridge.Config) {
	url := fmt.Sprintf("%s-%d", t.Name(), memRuns.Add(1))
	return memOf(url), bridge.Config{Settings: bridge.Settings{Name: "mem", Kind: memKind, URL: url}}
}

func TestOutKeepsOrderThroughFailures(t *testing.T) {
	bus := bridgetest.Bus(t)
	mb, cfg := newMem(t)
	mb.failSend = 2 * bridge.ReconnectAfter
	m, _ := bridge.NewMetrics(nil)
	cfg.Out = bridge.Route{Scope: "/out/", Address: "topic"}
	cfg.BatchSize = 7
	b := bridgetest.Run(t, bus, cfg, m)
	inf := bridgetest.Informer(t, bus, "/out/")
	const n = 100
	for i := range n {
		bridgetest.PublishCE(t, inf, bridgetest.Event(i, 64))
	}
	testutil.WaitFor(t, bridgetest.Timeout, "all events at the broker", func() bool { return len(mb.events("topic")) >= n })
	got := mb.events("topic")
	if len(got) != n {
		t.Fatalf("broker has %d events, want %d", len(got), n)
	}
	for i, e := range got {
		want := bridgetest.Event(i, 64)
		if !reflect.DeepEqual(e, want) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, e, want)
		}
	}
	if r := bridgetest.Value(m.Retries, "mem", bridge.DirOut); r != float64(2*bridge.ReconnectAfter) {
		t.Errorf("retries %v, want %d", r, 2*bridge.ReconnectAfter)
	}
	if r := bridgetest.Value(m.Reconnects, "mem", bridge.DirOut); r != 2 {
		t.Errorf("reconnects %v, want 2", r)
	}
	if v := bridgetest.Value(m.Messages, "mem", bridge.DirOut); v != n {
		t.Errorf("messages %v, want %d", v, n)
	}
	if err := b.Ready(); err != nil {
		t.Errorf("Ready: %v", err)
	}
}

func TestInToBusWithDeadLetters(t *testing.T) {
	bus := bridgetest.Bus(t)
	mb, cfg := newMem(t)
	m, _ := bridge.NewMetrics(nil)
	cfg.In = bridge.Route{Scope: "/in/", Address: "topic"}
	cfg.DeadLetter = "/dead/"
	rd := bridgetest.Reader(t, bus, "/in/")
	dead := bridgetest.Reader(t, bus, "/dead/")
	const n = 20
	for i := range n {
		mb.add("topic", bridge.Message{Event: bridgetest.Event(i, 32)})
		if i == 5 {
			mb.add("topic", bridge.Message{Reason: bridge.ReasonJSON, Err: cloudevent.ErrJSON, Payload: []byte("{not json"), Position: "topic-0-6"})
		}
	}
	bridgetest.Run(t, bus, cfg, m)
	for i := range n {
		ev, e := bridgetest.ReadCE(t, rd)
		if ev.Scope.String() != "/in/" {
			t.Fatalf("event on %s", ev.Scope)
		}
		if want := bridgetest.Event(i, 32); !reflect.DeepEqual(e, want) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, e, want)
		}
	}
	_, dl := bridgetest.ReadCE(t, dead)
	if dl.ID != "topic-0-6" || dl.Extensions[bridge.ExtDeadLetterReason] != string(bridge.ReasonJSON) || string(dl.Data) != "{not json" {
		t.Errorf("dead letter %+v", dl)
	}
	testutil.WaitFor(t, bridgetest.Timeout, "all committed", func() bool { return mb.committed("topic") == n+1 })
	if v := bridgetest.Value(m.DeadLetters, "mem", bridge.DirIn, string(bridge.ReasonJSON)); v != 1 {
		t.Errorf("dead letters %v, want 1", v)
	}
}

func TestDropWithoutDeadLetterAndReconnect(t *testing.T) {
	bus := bridgetest.Bus(t)
	mb, cfg := newMem(t)
	mb.failRecv = 3
	m, _ := bridge.NewMetrics(nil)
	cfg.In = bridge.Route{Scope: "/in/", Address: "topic"}
	rd := bridgetest.Reader(t, bus, "/in/")
	bad := bridgetest.Event(1, 8)
	bad.Extensions["Bad-Name"] = "x" // no valid CloudEvent
	mb.add("topic", bridge.Message{Reason: bridge.ReasonAttribute, Err: errors.New("bad name"), Position: "p1"})
	mb.add("topic", bridge.Message{Event: bridgetest.Event(2, 8)})
	b := bridgetest.Run(t, bus, cfg, m)
	if _, e := bridgetest.ReadCE(t, rd); e.ID != "ev-2" {
		t.Fatalf("got %s", e.ID)
	}
	if v := bridgetest.Value(m.Drops, "mem", bridge.DirIn, string(bridge.ReasonAttribute)); v != 1 {
		t.Errorf("drops %v, want 1", v)
	}
	if v := bridgetest.Value(m.Reconnects, "mem", bridge.DirIn); v != 3 {
		t.Errorf("reconnects %v, want 3", v)
	}
	testutil.WaitFor(t, bridgetest.Timeout, "ready", func() bool { return b.Ready() == nil })
}

func TestCycleNotForwardedBack(t *testing.T) {
	bus := bridgetest.Bus(t)
	mb, cfg := newMem(t)
	m, _ := bridge.NewMetrics(nil)
	cfg.In = bridge.Route{Scope: "/loop/", Address: "in"}
	cfg.Out = bridge.Route{Scope: "/loop/", Address: "out"}
	rd := bridgetest.Reader(t, bus, "/loop/")
	bridgetest.Run(t, bus, cfg, m)
	mb.add("in", bridge.Message{Event: bridgetest.Event(1, 8)})
	bridgetest.ReadCE(t, rd)
	testutil.WaitFor(t, bridgetest.Timeout, "cycle drop", func() bool {
		return bridgetest.Value(m.Drops, "mem", bridge.DirOut, string(bridge.ReasonCycle)) == 1
	})
	bridgetest.PublishCE(t, bridgetest.Informer(t, bus, "/loop/"), bridgetest.Event(2, 8))
	testutil.WaitFor(t, bridgetest.Timeout, "own event out", func() bool { return len(mb.events("out")) == 1 })
	if got := mb.events("out"); got[0].ID != "ev-2" {
		t.Errorf("forwarded %s, want ev-2 alone", got[0].ID)
	}
}

func TestRejectedEventIsDeadLetter(t *testing.T) {
	// A broker address after "broker:" may start with "/" (AMQP 1.0's
	// /queue/NAME) and is still no scope.
	for dead, addr := range map[string]string{"dlq": "dlq", "broker:/queue/dlq": "/queue/dlq"} {
		t.Run(addr, func(t *testing.T) {
			bus := bridgetest.Bus(t)
			mb, cfg := newMem(t)
			m, _ := bridge.NewMetrics(nil)
			cfg.Out = bridge.Route{Scope: "/out/", Address: "topic"}
			cfg.DeadLetter = dead
			bridgetest.Run(t, bus, cfg, m)
			inf := bridgetest.Informer(t, bus, "/out/")
			for i := range 3 {
				e := bridgetest.Event(i, 8)
				if i == 1 {
					e.Extensions["reject"] = "yes"
				}
				bridgetest.PublishCE(t, inf, e)
			}
			testutil.WaitFor(t, bridgetest.Timeout, "two sent, one dead", func() bool {
				return len(mb.events("topic")) == 2 && len(mb.events(addr)) == 1
			})
			if dl := mb.events(addr)[0]; dl.ID != "ev-1" || dl.Extensions[bridge.ExtDeadLetterReason] != string(bridge.ReasonRejected) {
				t.Errorf("dead letter %+v", dl)
			}
		})
	}
}

func TestReadyReportsDown(t *testing.T) {
	bus := bridgetest.Bus(t)
	mb, cfg := newMem(t)
	mb.failSend = 1 << 30
	m, _ := bridge.NewMetrics(nil)
	cfg.Out = bridge.Route{Scope: "/out/", Address: "topic"}
	b := bridgetest.Run(t, bus, cfg, m)
	bridgetest.PublishCE(t, bridgetest.Informer(t, bus, "/out/"), bridgetest.Event(1, 8))
	testutil.WaitFor(t, bridgetest.Timeout, "a retry", func() bool { return bridgetest.Value(m.Retries, "mem", bridge.DirOut) > 0 })
	err := b.Ready()
	if !errors.Is(err, bridge.ErrDown) || !strings.Contains(err.Error(), "mem out") {
		t.Fatalf("Ready = %v", err)
	}
	if v := bridgetest.Value(m.Up, "mem", bridge.DirOut); v != 0 {
		t.Errorf("up %v", v)
	}
	mb.mu.Lock()
	mb.failSend = 0
	mb.mu.Unlock()
	testutil.WaitFor(t, bridgetest.Timeout, "up again", func() bool { return b.Ready() == nil })
}

func TestConfigValidate(t *testing.T) {
	ok := bridge.Config{Settings: bridge.Settings{Name: "a", Kind: "k"}, In: bridge.Route{Scope: "/a/", Address: "t"}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*bridge.Config){
		"no name":      func(c *bridge.Config) { c.Name = "" },
		"no kind":      func(c *bridge.Config) { c.Kind = "" },
		"no route":     func(c *bridge.Config) { c.In = bridge.Route{} },
		"no address":   func(c *bridge.Config) { c.In.Address = "" },
		"bad scope":    func(c *bridge.Config) { c.In.Scope = "a b" },
		"bad dead":     func(c *bridge.Config) { c.DeadLetter = "/a b/" },
		"empty broker": func(c *bridge.Config) { c.DeadLetter = bridge.DeadLetterBrokerPrefix },
		"out no scope": func(c *bridge.Config) { c.Out = bridge.Route{Address: "x"} },
	} {
		c := ok
		mod(&c)
		if err := c.Validate(); !errors.Is(err, bridge.ErrSettings) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := bridge.Open(bridge.Settings{Kind: "nosuch"}); !errors.Is(err, bridge.ErrUnknownKind) {
		t.Errorf("Open unknown kind: %v", err)
	}
	_ = context.Background
}
