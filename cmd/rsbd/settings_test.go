package main

import (
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/config"
	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/internal/gcfloor"
	"github.com/rsbd/rsbd/node"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
)

// load runs the cascade with only the given file content (none when
// empty), environment and flags: nothing of the real system is read.
func load(t *testing.T, file string, env []string, args ...string) (*config.Config, error) {
	t.Helper()
	fs, _, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatalf("flags %q: %v", args, err)
	}
	lo := config.LoadOptions{Files: []string{}, Env: env, Logger: slog.New(slog.DiscardHandler)}
	if file != "" {
		path := filepath.Join(t.TempDir(), "rsb.conf")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		lo.Files = []string{path}
	}
	return loadConfig(fs, lo)
}

// mustSettings loads and parses, failing the test on any error.
func mustSettings(t *testing.T, file string, env []string, args ...string) (settings, *config.Config) {
	t.Helper()
	c, err := load(t, file, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseSettings(c)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func TestDefaultsMatchTheNode(t *testing.T) {
	s, _ := mustSettings(t, "", nil)
	nd := node.DefaultConfig()
	n := s.node
	if n.SocketAddr != nd.SocketAddr || n.GossipAddr != nd.GossipAddr || n.DataAddr != nd.DataAddr {
		t.Errorf("addresses %q %q %q, node defaults %q %q %q", n.SocketAddr, n.GossipAddr, n.DataAddr,
			nd.SocketAddr, nd.GossipAddr, nd.DataAddr)
	}
	if n.Unicast || n.LocalProfile || n.Interface != "" || n.MaxDatagram != 0 || n.Name != "" || len(n.Join) != 0 {
		t.Errorf("defaults changed the single-host profile: %+v", n)
	}
	if n.QoS != nd.QoS || !n.ExplicitQoS || len(n.ScopeQoS) != 0 {
		t.Errorf("QoS %+v explicit=%v, want RSB default %+v", n.QoS, n.ExplicitQoS, nd.QoS)
	}
	gd := group.DefaultConfig()
	if n.Group.PoolBase != gd.PoolBase || n.Group.PoolPort != gd.PoolPort || n.Group.PoolSize != gd.PoolSize {
		t.Errorf("pool %v:%d/%d, group defaults %v:%d/%d", n.Group.PoolBase, n.Group.PoolPort, n.Group.PoolSize,
			gd.PoolBase, gd.PoolPort, gd.PoolSize)
	}
	sd := rsbsocket.DefaultConfig()
	if n.Socket.QueueFrames != sd.QueueFrames || n.Socket.QueueBytes != sd.QueueBytes ||
		n.Socket.MaxFrameSize != sd.MaxFrameSize || n.Socket.SlowClientPolicy != sd.SlowClientPolicy ||
		n.Socket.DefaultInterest != sd.DefaultInterest || n.Socket.MaxParticipants != sd.MaxParticipants {
		t.Errorf("socket config %+v, rsbsocket defaults %+v", n.Socket, sd)
	}
	if n.ShutdownFlush != node.DefaultShutdownFlush || n.InterestBarrier != node.DefaultInterestBarrier || n.Transport.TTL != 1 {
		t.Errorf("flush %v barrier %v ttl %d", n.ShutdownFlush, n.InterestBarrier, n.Transport.TTL)
	}
	if s.metricsAddr != DefaultMetricsAddr || s.logLevel != slog.LevelInfo || s.logFormat != logAuto || s.readyFile != "" {
		t.Errorf("daemon settings %+v", s)
	}
	if rc, qd := n.Streams.Receivers.Receiver, qos.DefaultReceiverConfig(); rc.NackTries != qd.NackTries || rc.GiveUpAfter != qd.GiveUpAfter {
		t.Errorf("NACK tries %d, give-up %v; qos defaults %d, %v", rc.NackTries, rc.GiveUpAfter, qd.NackTries, qd.GiveUpAfter)
	}
	if n.Transport.SpinWait != transport.DefaultSpinWait {
		t.Errorf("spin wait %v, transport default %v", n.Transport.SpinWait, transport.DefaultSpinWait)
	}
	if s.cpuLatency != -1 {
		t.Errorf("cpu latency %d by default, want -1 (no request)", s.cpuLatency)
	}
	for arg, want := range map[string]int{"off": -1, "0": 0, "50": 50, "1000000": 1_000_000} {
		if got, _ := mustSettings(t, "", nil, "--cpu-latency", arg); got.cpuLatency != want {
			t.Errorf("--cpu-latency %s gives %d, want %d", arg, got.cpuLatency, want)
		}
	}
	if off, _ := mustSettings(t, "", nil, "--spin-wait", "0"); off.node.Transport.SpinWait >= 0 {
		t.Errorf("--spin-wait 0 gives %v, want a negative (never polls)", off.node.Transport.SpinWait)
	}
	if n.Socket.SpinWait != rsbsocket.DefaultSpinWait {
		t.Errorf("socket spin wait %v, default %v", n.Socket.SpinWait, rsbsocket.DefaultSpinWait)
	}
	if off, _ := mustSettings(t, "", nil, "--socket-spin-wait", "0"); off.node.Socket.SpinWait >= 0 {
		t.Errorf("--socket-spin-wait 0 gives %v, want a negative (never polls)", off.node.Socket.SpinWait)
	}
	if c, err := load(t, "", nil, "--socket-spin-wait", "1s"); err != nil {
		t.Fatal(err)
	} else if _, err := parseSettings(c); !errors.Is(err, rsbsocket.ErrInvalidConfig) {
		t.Errorf("--socket-spin-wait 1s (above the bound): %v, want ErrInvalidConfig", err)
	}
}

func TestEveryOptionHasItsKey(t *testing.T) {
	keys := []string{config.KeySocketAddr, keySocketPath, keySocketAllow, keySocketPathMode, config.KeyGossipAddr, config.KeyMetricsAddr, keyGatewayHTTP,
		keyGatewayTLSCert, keyGatewayTLSKey, keyGatewayClientCA, keyGatewayTokenFile, keyGatewayOrigins, keyGatewayMeshMessage, keyGatewayA2A, keyWebAddr, config.KeyJoin, keyKeyFile, keyClusterLabel,
		config.KeyMulticast, keyDataAddr, keyAdvertiseAddr, keyInterface, keyName, keyMaxDatagram,
		keyMulticastTTL, keyGroupPool, keyGroupPoolSize, keyLocal, keySlowClient, keyDefaultInt,
		keyQueueFrames, keyQueueBytes, keyMaxFrame, keyStallTimeout, keyMaxConns, keyParticipants, keySocketSpin, keyShutdownFlush, keyBarrier, keyNackTries, keyNackGiveUp, keySpinWait, keyCPULatency, keyGCFloor, keyLogLevel,
		keyLogFormat, keyReadyFile}
	var got []string
	for _, o := range options {
		got = append(got, o.key())
	}
	if !reflect.DeepEqual(got, keys) {
		t.Fatalf("option keys\n %q\nwant\n %q", got, keys)
	}
}

func TestPrecedenceFlagOverEnvOverFile(t *testing.T) {
	file := "[rsbd]\nsocket.addr = 127.0.0.1:1001\ngossip.addr = 127.0.0.1:2001\nmetrics.addr = 127.0.0.1:3001\n"
	env := []string{"RSB_RSBD_SOCKET_ADDR=127.0.0.1:1002", "RSB_RSBD_GOSSIP_ADDR=127.0.0.1:2002", "HOME=/nonexistent"}
	s, c := mustSettings(t, file, env, "--socket-addr", "127.0.0.1:1003")
	if s.node.SocketAddr != "127.0.0.1:1003" || s.node.GossipAddr != "127.0.0.1:2002" || s.metricsAddr != "127.0.0.1:3001" {
		t.Fatalf("socket %s gossip %s metrics %s, want flag, env, file", s.node.SocketAddr, s.node.GossipAddr, s.metricsAddr)
	}
	for key, origin := range map[string]string{
		config.KeySocketAddr:  "flag --socket-addr",
		config.KeyGossipAddr:  "env RSB_RSBD_GOSSIP_ADDR",
		config.KeyMetricsAddr: "rsb.conf:4",
		config.KeyJoin:        "default",
	} {
		if v, _ := c.Get(key); !strings.HasSuffix(v.Origin.String(), origin) {
			t.Errorf("%s comes from %q, want %q", key, v.Origin, origin)
		}
	}
}

func TestFlagsSetEverySetting(t *testing.T) {
	s, _ := mustSettings(t, "", nil,
		"--socket-addr=off", "--gossip-addr", "127.0.0.1:7000", "--metrics-addr", "off",
		"--join", "10.0.0.1:7946, 10.0.0.2", "--multicast=false", "--data-addr", "127.0.0.1:7001",
		"--advertise-addr", "10.1.1.1:7002", "--interface", "lo", "--name", "arm-pc", "--max-datagram", "9000",
		"--multicast-ttl", "4", "--group-pool", "239.1.2.0:4000", "--group-pool-size", "64", "--local",
		"--socket-slow-client", "disconnect", "--socket-default-interest", "none",
		"--socket-queue-frames", "10", "--socket-queue-bytes", "4096", "--socket-max-frame", "2048",
		"--socket-stall-timeout", "250ms", "--socket-max-connections", "300", "--socket-max-participants", "100",
		"--shutdown-flush", "2s", "--interest-barrier", "1.5s", "--nack-tries", "25", "--nack-give-up", "3s", "--spin-wait", "80us", "--log-level", "debug", "--log-format", "json", "--ready-file", "/run/x.json")
	n := s.node
	checks := []struct {
		what      string
		got, want any
	}{
		{"socket", n.SocketAddr, "off"},
		{"gossip", n.GossipAddr, "127.0.0.1:7000"},
		{"metrics", s.metricsAddr, ""},
		{"join", n.Join, []string{"10.0.0.1:7946", "10.0.0.2"}},
		{"unicast", n.Unicast, true},
		{"data", n.DataAddr, "127.0.0.1:7001"},
		{"advertise", n.AdvertiseAddr, "10.1.1.1:7002"},
		{"interface", n.Interface, "lo"},
		{"name", n.Name, "arm-pc"},
		{"datagram", n.MaxDatagram, 9000},
		{"ttl", n.Transport.TTL, 4},
		{"pool", netip.AddrPortFrom(n.Group.PoolBase, n.Group.PoolPort), netip.MustParseAddrPort("239.1.2.0:4000")},
		{"pool size", n.Group.PoolSize, 64},
		{"local", n.LocalProfile, true},
		{"slow client", n.Socket.SlowClientPolicy, rsbsocket.SlowClientDisconnect},
		{"interest", n.Socket.DefaultInterest, rsbsocket.InterestNone},
		{"queue", [3]int{n.Socket.QueueFrames, n.Socket.QueueBytes, n.Socket.MaxFrameSize}, [3]int{10, 4096, 2048}},
		{"stall", n.Socket.StallTimeout.String(), "250ms"},
		{"connections", n.Socket.MaxConnections, 300},
		{"participants", n.Socket.MaxParticipants, 100},
		{"flush", n.ShutdownFlush.String(), "2s"},
		{"barrier", n.InterestBarrier.String(), "1.5s"},
		{"nack tries", n.Streams.Receivers.Receiver.NackTries, 25},
		{"nack give up", n.Streams.Receivers.Receiver.GiveUpAfter.String(), "3s"},
		{"spin", n.Transport.SpinWait.String(), "80µs"},
		{"log", [2]any{s.logLevel, s.logFormat}, [2]any{slog.LevelDebug, logJSON}},
		{"ready", s.readyFile, "/run/x.json"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

func TestRSBSocketPort(t *testing.T) {
	t.Run("port applies", func(t *testing.T) {
		s, c := mustSettings(t, "[transport.socket]\nhost = example.org\nport = 4444\n", nil)
		if s.node.SocketAddr != ":4444" {
			t.Fatalf("socket address %q, want :4444", s.node.SocketAddr)
		}
		v, _ := c.Get(config.KeySocketAddr)
		if !strings.Contains(v.Origin.String(), "transport.socket.port") || !strings.Contains(v.Origin.String(), "rsb.conf:3") {
			t.Fatalf("origin %q does not say it came from transport.socket.port in the file", v.Origin)
		}
	})
	t.Run("rsbd key wins", func(t *testing.T) {
		s, _ := mustSettings(t, "[transport.socket]\nport = 4444\n[rsbd]\nsocket.addr = 127.0.0.1:5555\n",
			[]string{"RSB_TRANSPORT_SOCKET_PORT=4445"})
		if s.node.SocketAddr != "127.0.0.1:5555" {
			t.Fatalf("socket address %q, want rsbd.socket.addr", s.node.SocketAddr)
		}
	})
	t.Run("flag wins", func(t *testing.T) {
		s, _ := mustSettings(t, "", []string{"RSB_TRANSPORT_SOCKET_PORT=4445"}, "--socket-addr", ":6000")
		if s.node.SocketAddr != ":6000" {
			t.Fatalf("socket address %q, want the flag's", s.node.SocketAddr)
		}
	})
	t.Run("bad port", func(t *testing.T) {
		_, err := load(t, "", []string{"RSB_TRANSPORT_SOCKET_PORT=http"})
		if !errors.Is(err, config.ErrBadValue) || !strings.Contains(err.Error(), "transport.socket.port") ||
			!strings.Contains(err.Error(), "env RSB_TRANSPORT_SOCKET_PORT") {
			t.Fatalf("error %v does not name the key and its origin", err)
		}
	})
}

// TestRSBSocketPath: transport.socket.path, which the rsb tools read, is
// the daemon's socket path unless rsbd.socket.path says otherwise.
func TestRSBSocketPath(t *testing.T) {
	s, c := mustSettings(t, "[transport.socket]\npath = /run/rsbd.sock\n", nil)
	if s.node.SocketPath != "/run/rsbd.sock" {
		t.Fatalf("socket path %q, want transport.socket.path's", s.node.SocketPath)
	}
	if v, _ := c.Get(keySocketPath); !strings.Contains(v.Origin.String(), "transport.socket.path") {
		t.Fatalf("origin %q does not name transport.socket.path", v.Origin)
	}
	s, _ = mustSettings(t, "[transport.socket]\npath = /run/a.sock\n[rsbd.socket]\npath = /run/b.sock\n", nil)
	if s.node.SocketPath != "/run/b.sock" {
		t.Fatalf("socket path %q, want rsbd.socket.path's", s.node.SocketPath)
	}
	s, _ = mustSettings(t, "", []string{"RSB_TRANSPORT_SOCKET_PATH=/run/a.sock"}, "--socket-path", "/run/c.sock")
	if s.node.SocketPath != "/run/c.sock" {
		t.Fatalf("socket path %q, want the flag's", s.node.SocketPath)
	}
	if s, _ = mustSettings(t, "", nil); s.node.SocketPath != "" {
		t.Fatalf("socket path %q by default, want none", s.node.SocketPath)
	}
}

func TestQoSFromRSBKeysAndScopes(t *testing.T) {
	file := "[rsbd.qos]\n/robot/arm/ = RELIABLE\n/camera/ = UNORDERED,UNRELIABLE\n"
	env := []string{"RSB_QUALITYOFSERVICE_RELIABILITY=UNRELIABLE", "RSB_QUALITYOFSERVICE_ORDERING=ORDERED"}
	s, _ := mustSettings(t, file, env)
	if want := (node.QoS{Reliable: false, Ordered: true}); s.node.QoS != want || !s.node.ExplicitQoS {
		t.Fatalf("global QoS %+v, want %+v", s.node.QoS, want)
	}
	want := []node.ScopeQoS{
		{Scope: scope.MustParse("/camera/"), QoS: node.QoS{}},
		{Scope: scope.MustParse("/robot/arm/"), QoS: node.QoS{Reliable: true, Ordered: true}},
	}
	if !reflect.DeepEqual(s.node.ScopeQoS, want) {
		t.Fatalf("scope QoS %+v, want %+v", s.node.ScopeQoS, want)
	}
}

func TestBadValuesNameKeyAndOrigin(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		env    []string
		args   []string
		key    string
		origin string
	}{
		{"bool", "", []string{"RSB_RSBD_MULTICAST=maybe"}, nil, "rsbd.multicast", "env RSB_RSBD_MULTICAST"},
		{"gossip", "", nil, []string{"--gossip-addr", "localhost"}, "rsbd.gossip.addr", "flag --gossip-addr"},
		{"data host name", "", nil, []string{"--data-addr", "localhost:1"}, "rsbd.data.addr", "flag --data-addr"},
		{"socket port", "[rsbd]\nsocket.addr = :99999\n", nil, nil, "rsbd.socket.addr", "rsb.conf:2"},
		{"metrics", "", []string{"RSB_RSBD_METRICS_ADDR=9555"}, nil, "rsbd.metrics.addr", "env RSB_RSBD_METRICS_ADDR"},
		{"pool", "[rsbd.group]\npool = 10.0.0.1:4000\n", nil, nil, "rsbd.group.pool", "rsb.conf:2"},
		{"pool size", "", nil, []string{"--group-pool-size", "0"}, "rsbd.group.pool.size", "flag --group-pool-size"},
		{"datagram", "", nil, []string{"--max-datagram", "100"}, "rsbd.max.datagram", "flag --max-datagram"},
		{"join", "", nil, []string{"--join", "10.0.0.1:x"}, "rsbd.join", "flag --join"},
		{"interface", "", nil, []string{"--interface", "no-such-nic0"}, "rsbd.interface", "flag --interface"},
		{"policy", "", []string{"RSB_RSBD_SOCKET_SLOW_CLIENT=kill"}, nil, "rsbd.socket.slow.client", "env RSB_RSBD_SOCKET_SLOW_CLIENT"},
		{"interest", "", nil, []string{"--socket-default-interest", "some"}, "rsbd.socket.default.interest", "flag"},
		{"flush", "", nil, []string{"--shutdown-flush", "-1s"}, "rsbd.shutdown.flush", "flag --shutdown-flush"},
		{"barrier", "[rsbd.interest]\nbarrier = soon\n", nil, nil, "rsbd.interest.barrier", "rsb.conf:2"},
		{"nack tries", "", nil, []string{"--nack-tries", "0"}, "rsbd.nack.tries", "flag --nack-tries"},
		{"nack give up", "[rsbd.nack]\ngive.up = 0s\n", nil, nil, "rsbd.nack.give.up", "rsb.conf:2"},
		{"log level", "", nil, []string{"--log-level", "loud"}, "rsbd.log.level", "flag --log-level"},
		{"cpu latency", "", nil, []string{"--cpu-latency", "-1"}, "rsbd.cpu.latency", "flag --cpu-latency"},
		{"cpu latency word", "", []string{"RSB_RSBD_CPU_LATENCY=low"}, nil, "rsbd.cpu.latency", "env RSB_RSBD_CPU_LATENCY"},
		{"cpu latency big", "[rsbd.cpu]\nlatency = 2000000\n", nil, nil, "rsbd.cpu.latency", "rsb.conf:2"},
		{"log format", "", nil, []string{"--log-format", "xml"}, "rsbd.log.format", "flag --log-format"},
		{"reliability", "", []string{"RSB_QUALITYOFSERVICE_RELIABILITY=MOSTLY"}, nil, "qualityofservice.reliability", "env"},
		{"scope qos", "[rsbd.qos]\n/a/ = FAST\n", nil, nil, "/a/", "rsb.conf:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(t, tt.file, tt.env, tt.args...)
			if err == nil {
				_, err = parseSettings(c)
			}
			if !errors.Is(err, config.ErrBadValue) {
				t.Fatalf("error %v, want a bad value error", err)
			}
			if !strings.Contains(err.Error(), tt.key) || !strings.Contains(err.Error(), tt.origin) {
				t.Fatalf("error %q does not name %s and %s", err, tt.key, tt.origin)
			}
		})
	}
}

func TestAllBadValuesReportedAtOnce(t *testing.T) {
	c, err := load(t, "", []string{"RSB_RSBD_LOCAL=perhaps"}, "--gossip-addr", "x", "--log-level", "loud")
	if err != nil {
		t.Fatal(err)
	}
	_, err = parseSettings(c)
	for _, key := range []string{"rsbd.local", "rsbd.gossip.addr", "rsbd.log.level"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("error %v does not report %s", err, key)
		}
	}
}

func TestUnknownKeys(t *testing.T) {
	c, err := load(t, "[rsbd]\nsockt.addr = :1\n[rsbd.qos]\n/a/ = RELIABLE\n[transport.socket]\nnodelay = 1\n",
		[]string{"RSB_RSBD_GOSIP_ADDR=x"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := unknownKeys(c), []string{"rsbd.gosip.addr", "rsbd.sockt.addr"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("unknown keys %q, want %q", got, want)
	}
}

func TestGCFloorSetting(t *testing.T) {
	if s, _ := mustSettings(t, "", nil); s.gcFloorMiB != gcfloor.DefaultFloorMiB {
		t.Fatalf("default floor %d MiB, want %d", s.gcFloorMiB, gcfloor.DefaultFloorMiB)
	}
	if s, _ := mustSettings(t, "", nil, "--gc-floor", "off"); s.gcFloorMiB != 0 {
		t.Fatalf("--gc-floor off: %d MiB", s.gcFloorMiB)
	}
	if s, _ := mustSettings(t, "[rsbd]\ngc.floor = 256\n", nil); s.gcFloorMiB != 256 {
		t.Fatalf("gc.floor = 256 in a file: %d MiB", s.gcFloorMiB)
	}
	c, err := load(t, "", nil, "--gc-floor", "-5")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseSettings(c); err == nil || !strings.Contains(err.Error(), keyGCFloor) {
		t.Fatalf("--gc-floor -5: %v, want an error naming %s", err, keyGCFloor)
	}
}

func TestGCFloorYieldsToTheEnvironment(t *testing.T) {
	t.Setenv("GOGC", "150")
	if stop := startGCFloor(64, slog.New(slog.DiscardHandler)); stop != nil {
		stop()
		t.Fatal("the heap floor was set although GOGC is")
	}
}
