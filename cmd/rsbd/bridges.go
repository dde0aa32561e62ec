package main

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/bridge"
	_ "github.com/rsbd/rsbd/bridge/kafka" // registers kind kafka
	_ "github.com/rsbd/rsbd/bridge/nats"  // registers kind nats
	_ "github.com/rsbd/rsbd/bridge/redis" // registers kind redis
	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/node"
)

// keyBridge is the section of the broker bridges, one subsection a
// bridge:
//
//	[bridge.orders]
//	kind        = kafka
//	url         = 127.0.0.1:9092
//	format      = binary
//	out.scope   = /orders/
//	out.address = orders
//	in.address  = orders-in
//	in.scope    = /from/kafka/
//	deadletter  = orders-dlq
//	group       = rsbd-orders
//
// kind, url, format, the routes, deadletter and queue are the bridge's;
// every other key is an option of the broker kind (docs/BRIDGES.md). The
// environment sets them as RSB_BRIDGE_ORDERS_OUT_SCOPE.
const keyBridge = "bridge"

// The keys every bridge has, the end of its keys.
const (
	bridgeKind       = "kind"
	bridgeURL        = "url"
	bridgeFormat     = "format"
	bridgeInScope    = "in.scope"
	bridgeInAddress  = "in.address"
	bridgeOutScope   = "out.scope"
	bridgeOutAddress = "out.address"
	bridgeDeadLetter = "deadletter"
	bridgeQueue      = "queue"
)

// bridgeKeys lists them, the dotted ones first so that they match before
// their last part does.
var bridgeKeys = []string{bridgeInScope, bridgeInAddress, bridgeOutScope, bridgeOutAddress,
	bridgeKind, bridgeURL, bridgeFormat, bridgeDeadLetter, bridgeQueue}

// bridgeField splits the rest of a key after "bridge." into the bridge's
// name and its field (a bridge key, or else the last part: an option).
func bridgeField(rest string) (name, field string) {
	for _, k := range bridgeKeys {
		if n, ok := strings.CutSuffix(rest, "."+k); ok && n != "" {
			return n, k
		}
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 {
		return "", rest
	}
	return rest[:i], rest[i+1:]
}

// bridges reads the bridges of the keyBridge section, sorted by name,
// each checked as bridge.New will check it (its kind's Factory included).
func (r *reader) bridges() []bridge.Config {
	byName := map[string]*bridge.Config{}
	var names []string
	for _, k := range r.c.Keys() {
		rest, ok := strings.CutPrefix(k, keyBridge+".")
		if !ok {
			continue
		}
		name, field := bridgeField(rest)
		if name == "" {
			r.fail(k, keyBridge+".NAME."+strings.Join(bridgeKeys, "|")+"|OPTION", nil)
			continue
		}
		c := byName[name]
		if c == nil {
			c = &bridge.Config{Settings: bridge.Settings{Name: name, Options: map[string]string{}}}
			byName[name] = c
			names = append(names, name)
		}
		r.bridgeKey(c, k, field)
	}
	slices.Sort(names)
	out := make([]bridge.Config, 0, len(names))
	for _, name := range names {
		c := byName[name]
		if err := checkBridge(*c); err != nil {
			r.fail(keyBridge+"."+name+"."+bridgeKind, "a valid bridge "+name, err)
			continue
		}
		out = append(out, *c)
	}
	return out
}

// bridgeKey sets field of c from key k.
func (r *reader) bridgeKey(c *bridge.Config, k, field string) {
	v := strings.TrimSpace(r.c.String(k, ""))
	switch field {
	case bridgeKind:
		c.Kind = strings.ToLower(v)
	case bridgeURL:
		c.URL = v
	case bridgeFormat:
		f, err := bridge.ParseFormat(v)
		if err != nil {
			r.fail(k, "binary, structured, raw or frame", nil)
		}
		c.Format = f
	case bridgeInScope:
		c.In.Scope = v
	case bridgeInAddress:
		c.In.Address = v
	case bridgeOutScope:
		c.Out.Scope = v
	case bridgeOutAddress:
		c.Out.Address = v
	case bridgeDeadLetter:
		c.DeadLetter = v
	case bridgeQueue:
		n, err := r.c.Int(k, 0)
		if err != nil || n < 0 {
			r.fail(k, "a number of events", err)
		}
		c.QueueLen = n
	default:
		c.Options[field] = v
	}
}

// checkBridge checks c and lets its kind's Factory check the settings.
func checkBridge(c bridge.Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	b, err := bridge.Open(c.Settings)
	if err != nil {
		return err
	}
	return b.Close()
}

// bridges are the running bridges of the daemon, on a Bus of their own
// embedded in the node.
type bridges struct {
	bus  *client.Bus
	all  []*bridge.Bridge
	once sync.Once
	err  error
}

// startBridges starts the bridges of cfgs (none: nil) and registers their
// metrics with reg.
func startBridges(nd *node.Node, cfgs []bridge.Config, log *slog.Logger, reg prometheus.Registerer) (*bridges, error) {
	if len(cfgs) == 0 {
		return nil, nil
	}
	m, err := bridge.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	bus, err := client.EmbeddedConfig(nd, client.Config{Logger: log})
	if err != nil {
		return nil, err
	}
	bs := &bridges{bus: bus}
	for _, c := range cfgs {
		c.Logger = log
		b, err := bridge.New(bus, c, m)
		if err != nil {
			_ = bs.close()
			return nil, fmt.Errorf("bridge %s: %w", c.Name, err)
		}
		b.Start()
		bs.all = append(bs.all, b)
		log.Info("bridge started", "name", c.Name, "kind", c.Kind, "in", c.In.Address, "in_scope", c.In.Scope,
			"out", c.Out.Address, "out_scope", c.Out.Scope, "format", c.Format.String())
	}
	return bs, nil
}

// ready returns why a bridge is down, or nil (also for no bridges).
func (bs *bridges) ready() error {
	if bs == nil {
		return nil
	}
	var errs []error
	for _, b := range bs.all {
		errs = append(errs, b.Ready())
	}
	return errors.Join(errs...)
}

// close stops every bridge and the bus; nil has nothing to close. It is
// idempotent.
func (bs *bridges) close() error {
	if bs == nil {
		return nil
	}
	bs.once.Do(func() {
		var errs []error
		for _, b := range bs.all {
			errs = append(errs, b.Close())
		}
		bs.err = errors.Join(append(errs, bs.bus.Close())...)
	})
	return bs.err
}
