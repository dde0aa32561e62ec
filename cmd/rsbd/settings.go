package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/config"
	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/node"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
)

// settings is what the daemon runs with, read from the configuration.
type settings struct {
	node        node.Config
	metricsAddr string // empty: no HTTP endpoints
	gatewayAddr string // empty: no CloudEvents gateway
	gatewaySec  gatewaySecurity
	// gatewayHooks are the webhooks the gateway starts with.
	gatewayHooks []namedWebhook
	// bridges are the broker bridges the daemon runs ([bridge.NAME]).
	bridges    []bridge.Config
	readyFile  string // empty: no ready file
	cpuLatency int    // µs of the PM QoS request to hold; -1: none
	gcFloorMiB int    // heap floor; 0: none (Go's own policy)
	logLevel   slog.Level
	logFormat  string // logAuto, logText or logJSON
}

// loadConfig builds the configuration tree: the built-in defaults of every
// option, the RSB cascade (files, RSB_* environment) and the flags set in
// fs, then the RSB socket port rule (socketFromRSB).
func loadConfig(fs *flag.FlagSet, lo config.LoadOptions) (*config.Config, error) {
	lo.Defaults = defaults()
	c, err := config.Load(lo)
	if err != nil {
		return nil, err
	}
	if fs != nil {
		if err := c.SetFlags(fs, flagPrintConfig, flagVersion); err != nil {
			return nil, err
		}
	}
	if err := socketFromRSB(c); err != nil {
		return nil, err
	}
	return c, nil
}

// defaults returns the built-in value of every option and RSB's QoS default.
func defaults() map[string]string {
	d := make(map[string]string, len(options)+2)
	for _, o := range options {
		d[o.key()] = o.def
	}
	d[config.KeyReliability] = config.DefaultQoS.Reliability.String()
	d[config.KeyOrdering] = config.DefaultQoS.Ordering.String()
	return d
}

// socketFromRSB applies RSB's transport.socket.port to the socket server
// address when rsbd.socket.addr has only its built-in default: the daemon
// then listens where the RSB clients sharing its configuration connect.
// transport.socket.host is not used for binding: RSB's own socket servers
// bind every IPv4 interface whatever host they are configured with, and so
// does rsbd. rsbd.socket.addr, set anywhere, wins. Likewise
// transport.socket.path (the tools' Unix socket) becomes the daemon's
// socket path unless rsbd.socket.path is set.
func socketFromRSB(c *config.Config) error {
	if path, ok := c.Get(config.KeySocketPath); ok {
		if own, _ := c.Get(keySocketPath); own.Origin.Source == config.SourceDefault {
			if err := c.Set(keySocketPath, strings.TrimSpace(path.String), config.KeySocketPath+" ("+path.Origin.String()+")"); err != nil {
				return err
			}
		}
	}
	addr, _ := c.Get(config.KeySocketAddr)
	port, ok := c.Get(config.KeySocketPort)
	if !ok || addr.Origin.Source != config.SourceDefault {
		return nil
	}
	p, err := strconv.ParseUint(strings.TrimSpace(port.String), 10, 16)
	if err != nil {
		return &config.ValueError{Key: config.KeySocketPort, Value: port.String, Origin: port.Origin, Want: "a port number 0..65535", Err: err}
	}
	return c.Set(config.KeySocketAddr, ":"+strconv.FormatUint(p, 10), config.KeySocketPort+" ("+port.Origin.String()+")")
}

// unknownKeys returns the keys of the rsbd section that no option reads
// (typos, or settings of another rsbd version); the caller warns about them.
func unknownKeys(c *config.Config) []string {
	known := map[string]bool{}
	for _, o := range options {
		known[o.key()] = true
	}
	var out []string
	for _, k := range c.Keys() {
		if strings.HasPrefix(k, "rsbd.") && !known[k] && !strings.HasPrefix(k, config.KeyScopeQoS+"./") &&
			!strings.HasPrefix(k, keyGatewayWebhook+".") {
			out = append(out, k)
		}
	}
	return out
}

// parseSettings reads every setting from c. All bad values are reported at
// once, each naming its key, value and origin.
func parseSettings(c *config.Config) (settings, error) {
	r := &reader{c: c}
	var s settings
	s.node = r.nodeConfig()
	s.metricsAddr = r.hostPort(config.KeyMetricsAddr, true)
	s.gatewayAddr = r.hostPort(keyGatewayHTTP, true)
	s.gatewaySec = r.gatewaySecurity()
	s.gatewayHooks = r.gatewayWebhooks(s.gatewayAddr)
	s.bridges = r.bridges()
	s.readyFile = c.String(keyReadyFile, "")
	s.cpuLatency = r.cpuLatency()
	s.gcFloorMiB = r.gcFloor()
	if err := s.logLevel.UnmarshalText([]byte(c.String(keyLogLevel, "info"))); err != nil {
		r.fail(keyLogLevel, "debug, info, warn or error", nil)
	}
	s.logFormat = strings.ToLower(c.String(keyLogFormat, logAuto))
	if !slices.Contains([]string{logAuto, logText, logJSON}, s.logFormat) {
		r.fail(keyLogFormat, "auto, text or json", nil)
	}
	if err := errors.Join(r.errs...); err != nil {
		return settings{}, err
	}
	if err := s.node.Validate(); err != nil {
		return settings{}, err
	}
	return s, nil
}

// nodeConfig maps the settings onto a node.Config.
func (r *reader) nodeConfig() node.Config {
	c := r.c
	var nc node.Config
	nc.Name = c.String(keyName, "")
	nc.SocketAddr = r.hostPort(config.KeySocketAddr, true)
	if nc.SocketAddr == "" {
		nc.SocketAddr = valueOff
	}
	nc.SocketPath = c.String(keySocketPath, "")
	nc.GossipAddr = r.ipPort(config.KeyGossipAddr, true)
	nc.DataAddr = r.ipPort(keyDataAddr, false)
	if v := c.String(keyAdvertiseAddr, ""); v != "" {
		nc.AdvertiseAddr = r.ipPort(keyAdvertiseAddr, false)
	}
	nc.Join = r.join()
	nc.Unicast = !r.boolean(config.KeyMulticast)
	nc.Interface = r.iface()
	nc.MaxDatagram = r.maxDatagram()
	nc.Transport.TTL = r.intRange(keyMulticastTTL, 1, 255)
	nc.Group.PoolBase, nc.Group.PoolPort = r.pool()
	nc.Group.PoolSize = r.intRange(keyGroupPoolSize, 1, group.MaxPoolSize)
	nc.LocalProfile = r.boolean(keyLocal)
	nc.Socket = r.socket()
	nc.ShutdownFlush = r.duration(keyShutdownFlush, node.DefaultShutdownFlush)
	nc.InterestBarrier = r.duration(keyBarrier, node.DefaultInterestBarrier)
	if nc.Transport.SpinWait = r.duration(keySpinWait, transport.DefaultSpinWait); nc.Transport.SpinWait == 0 {
		nc.Transport.SpinWait = -1 // 0 on the command line: never poll
	}
	r.qos(&nc)
	rc := &nc.Streams.Receivers.Receiver
	rc.NackTries = r.intRange(keyNackTries, 1, qos.MaxNackTries)
	if rc.GiveUpAfter = r.duration(keyNackGiveUp, qos.DefaultGiveUpAfter); rc.GiveUpAfter <= 0 {
		r.fail(keyNackGiveUp, "a positive duration", nil)
	}
	return nc
}

// socket reads the RSB socket server settings.
func (r *reader) socket() rsbsocket.Config {
	var sc rsbsocket.Config
	switch v := strings.ToLower(r.c.String(keySlowClient, "drop")); v {
	case "drop":
		sc.SlowClientPolicy = rsbsocket.SlowClientDropNewest
	case "disconnect":
		sc.SlowClientPolicy = rsbsocket.SlowClientDisconnect
	default:
		r.fail(keySlowClient, "drop or disconnect", nil)
	}
	switch v := strings.ToLower(r.c.String(keyDefaultInt, "all")); v {
	case "all":
		sc.DefaultInterest = rsbsocket.InterestAll
	case "none":
		sc.DefaultInterest = rsbsocket.InterestNone
	default:
		r.fail(keyDefaultInt, "all or none", nil)
	}
	sc.QueueFrames = r.intRange(keyQueueFrames, 1, 1<<24)
	sc.QueueBytes = r.intRange(keyQueueBytes, 1, 1<<31-1)
	sc.MaxFrameSize = r.intRange(keyMaxFrame, 1, 1<<31-1)
	sc.StallTimeout = r.duration(keyStallTimeout, rsbsocket.DefaultStallTimeout)
	sc.MaxParticipants = r.intRange(keyParticipants, 1, 1<<20)
	sc.MaxConnections = r.intRange(keyMaxConns, 1, 1<<24)
	if sc.SpinWait = r.duration(keySocketSpin, rsbsocket.DefaultSpinWait); sc.SpinWait == 0 {
		sc.SpinWait = -1 // 0 on the command line: never poll
	}
	return sc
}

// qos reads the global QoS and the per-scope overrides.
func (r *reader) qos(nc *node.Config) {
	q, err := r.c.QoS()
	if err != nil {
		r.errs = append(r.errs, err)
	}
	nc.QoS, nc.ExplicitQoS = nodeQoS(q), true
	overrides, err := r.c.ScopeQoS()
	if err != nil {
		r.errs = append(r.errs, err)
		return
	}
	for _, o := range overrides {
		sc, err := scope.Parse(o.Scope)
		if err != nil {
			r.fail(config.KeyScopeQoS+"."+o.Scope, "a valid scope", err)
			continue
		}
		nc.ScopeQoS = append(nc.ScopeQoS, node.ScopeQoS{Scope: sc, QoS: nodeQoS(o.QoS)})
	}
}

// nodeQoS converts RSB's QoS to the node's.
func nodeQoS(q config.QoS) node.QoS {
	return node.QoS{Reliable: q.Reliability == config.Reliable, Ordered: q.Ordering == config.Ordered}
}

// reader reads typed settings and collects the errors.
type reader struct {
	c    *config.Config
	errs []error
}

// fail records a bad value of key.
func (r *reader) fail(key, want string, err error) {
	v, _ := r.c.Get(key)
	r.errs = append(r.errs, &config.ValueError{Key: key, Value: v.String, Origin: v.Origin, Want: want, Err: err})
}

func (r *reader) boolean(key string) bool {
	b, err := r.c.Bool(key, false)
	if err != nil {
		r.errs = append(r.errs, err)
	}
	return b
}

// duration reads a non-negative Go duration ("250ms", "2s").
func (r *reader) duration(key string, def time.Duration) time.Duration {
	d, err := r.c.Duration(key, def)
	if err != nil {
		r.errs = append(r.errs, err)
	}
	return d
}

// intRange reads an integer in lo..hi.
func (r *reader) intRange(key string, lo, hi int) int {
	n, err := r.c.Int(key, 0)
	if err != nil {
		r.errs = append(r.errs, err)
		return 0
	}
	if n < lo || n > hi {
		r.fail(key, fmt.Sprintf("an integer in %d..%d", lo, hi), nil)
		return 0
	}
	return n
}

// cpuLatency reads --cpu-latency: "off" (-1) or microseconds.
func (r *reader) cpuLatency() int {
	if v := strings.TrimSpace(r.c.String(keyCPULatency, valueOff)); v == valueOff || v == "" {
		return -1
	}
	return r.intRange(keyCPULatency, 0, maxCPULatency)
}

// gcFloor reads --gc-floor: "off" (0) or MiB.
func (r *reader) gcFloor() int {
	if v := strings.TrimSpace(r.c.String(keyGCFloor, valueOff)); v == valueOff || v == "" {
		return 0
	}
	return r.intRange(keyGCFloor, 0, maxGCFloorMiB)
}

// hostPort reads a TCP listen address; with offOK, "off" (or empty) gives "".
func (r *reader) hostPort(key string, offOK bool) string {
	v := strings.TrimSpace(r.c.String(key, ""))
	if offOK && (v == "" || strings.EqualFold(v, valueOff)) {
		return ""
	}
	if _, port, err := net.SplitHostPort(v); err != nil {
		r.fail(key, "HOST:PORT", err)
	} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		r.fail(key, "HOST:PORT with a port number 0..65535", nil)
	}
	return v
}

// ipPort reads an IP:PORT address; with emptyHost, ":PORT" is accepted too.
func (r *reader) ipPort(key string, emptyHost bool) string {
	v := strings.TrimSpace(r.c.String(key, ""))
	if emptyHost && strings.HasPrefix(v, ":") {
		if _, err := strconv.ParseUint(v[1:], 10, 16); err != nil {
			r.fail(key, "IP:PORT", err)
		}
		return v
	}
	if _, err := netip.ParseAddrPort(v); err != nil {
		r.fail(key, "IP:PORT", err)
	}
	return v
}

// join reads the seed list: each entry HOST or HOST:PORT.
func (r *reader) join() []string {
	seeds := r.c.StringList(config.KeyJoin, nil)
	for _, s := range seeds {
		if !strings.Contains(s, ":") {
			continue
		}
		if _, port, err := net.SplitHostPort(s); err != nil {
			r.fail(config.KeyJoin, "a comma-separated list of HOST:PORT", err)
			return nil
		} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			r.fail(config.KeyJoin, "a comma-separated list of HOST:PORT", fmt.Errorf("bad port in %q", s))
			return nil
		}
	}
	return seeds
}

// iface reads the multicast interface and checks that it exists.
func (r *reader) iface() string {
	name := strings.TrimSpace(r.c.String(keyInterface, ""))
	if name == "" {
		return ""
	}
	if _, err := net.InterfaceByName(name); err != nil {
		r.fail(keyInterface, "the name of a network interface of this host", err)
	}
	return name
}

// maxDatagram reads the datagram size; "auto" (0) lets the node choose.
func (r *reader) maxDatagram() int {
	if v := strings.TrimSpace(r.c.String(keyMaxDatagram, valueAuto)); strings.EqualFold(v, valueAuto) || v == "0" {
		return 0
	}
	return r.intRange(keyMaxDatagram, 512, 65507)
}

// pool reads the first multicast address and port of the group pool.
func (r *reader) pool() (netip.Addr, uint16) {
	v := strings.TrimSpace(r.c.String(keyGroupPool, defaultPool))
	ap, err := netip.ParseAddrPort(v)
	if err != nil {
		r.fail(keyGroupPool, "a multicast IP:PORT", err)
		return netip.Addr{}, 0
	}
	if !ap.Addr().IsMulticast() || ap.Port() == 0 {
		r.fail(keyGroupPool, "a multicast IP:PORT with a non-zero port", nil)
		return netip.Addr{}, 0
	}
	return ap.Addr(), ap.Port()
}
