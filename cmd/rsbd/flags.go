package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rsbd/rsbd/config"
	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/internal/gcfloor"
	"github.com/rsbd/rsbd/node"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/transport"
)

// Keys of the settings rsbd reads besides those package config names. Each
// is config.FlagKey of its flag: --data-addr sets rsbd.data.addr, which a
// file spells "[rsbd] data.addr" and the environment RSB_RSBD_DATA_ADDR.
const (
	keyDataAddr      = "rsbd.data.addr"
	keyAdvertiseAddr = "rsbd.advertise.addr"
	keyInterface     = "rsbd.interface"
	keyName          = "rsbd.name"
	keyMaxDatagram   = "rsbd.max.datagram"
	keyMulticastTTL  = "rsbd.multicast.ttl"
	keyGroupPool     = "rsbd.group.pool"
	keyGroupPoolSize = "rsbd.group.pool.size"
	keyLocal         = "rsbd.local"
	keySocketPath    = "rsbd.socket.path"
	keySlowClient    = "rsbd.socket.slow.client"
	keyDefaultInt    = "rsbd.socket.default.interest"
	keyQueueFrames   = "rsbd.socket.queue.frames"
	keyQueueBytes    = "rsbd.socket.queue.bytes"
	keyMaxFrame      = "rsbd.socket.max.frame"
	keyStallTimeout  = "rsbd.socket.stall.timeout"
	keyParticipants  = "rsbd.socket.max.participants"
	keyMaxConns      = "rsbd.socket.max.connections"
	keySocketSpin    = "rsbd.socket.spin.wait"
	keyShutdownFlush = "rsbd.shutdown.flush"
	keyBarrier       = "rsbd.interest.barrier"
	keySpinWait      = "rsbd.spin.wait"
	keyCPULatency    = "rsbd.cpu.latency"
	keyGCFloor       = "rsbd.gc.floor"
	keyLogLevel      = "rsbd.log.level"
	keyLogFormat     = "rsbd.log.format"
	keyReadyFile     = "rsbd.ready.file"
	keyGatewayHTTP   = "rsbd.gateway.http"
	keyWebAddr       = "rsbd.web.addr"
	keyNackTries     = "rsbd.nack.tries"
	keyNackGiveUp    = "rsbd.nack.give.up"
)

// Special values and the flags that are not settings.
const (
	valueOff        = "off"  // disables the socket server or the HTTP endpoints
	valueAuto       = "auto" // lets the node pick the datagram size
	flagPrintConfig = "print-config"
	flagVersion     = "version"
)

// defaultPool is the group pool's default first address and port.
var defaultPool = netip.AddrPortFrom(group.DefaultPoolBase, group.DefaultPoolPort).String()

// option is one setting of rsbd: a command-line flag and the configuration
// key it sets. def is registered as the lowest-priority source, so
// --print-config shows every setting and where its value came from.
type option struct {
	flag  string // flag name; the key is config.FlagKey(flag)
	def   string // built-in default
	arg   string // value placeholder in the usage text; "" for a boolean
	usage string
}

// options lists every setting, in the order --help shows them.
var options = []option{
	{"socket-addr", node.DefaultSocketAddr, "HOST:PORT", `RSB socket server address ("off" disables it)`},
	{"socket-path", "", "PATH", "Unix socket also serving the RSB socket protocol, for local clients (they dial unix:PATH)"},
	{"socket-allow", "", "CIDR[,...]", "networks (or addresses) TCP clients may connect from; others are closed at once (default: every address that reaches --socket-addr)"},
	{"socket-path-mode", defaultSocketPathMode, "OCTAL", "permission of the --socket-path file: who may write it may connect (0660: the daemon's user and group)"},
	{"gossip-addr", node.DefaultGossipAddr, "IP:PORT", "memberlist bind address, UDP and TCP"},
	{"metrics-addr", DefaultMetricsAddr, "HOST:PORT", `HTTP address of /metrics, /livez, /readyz ("off" disables it)`},
	{"gateway-http", valueOff, "off|HOST:PORT", "HTTP address of the CloudEvents gateway: POST publishes on the path's scope, GET subscribes (SSE, or WebSocket with subprotocol cloudevents.json)"},
	{"gateway-tls-cert", "", "FILE", "PEM certificate chain the gateway serves HTTPS with (needs --gateway-tls-key; both reloaded on SIGHUP, a failed reload keeps the old pair)"},
	{"gateway-tls-key", "", "FILE", "PEM private key of --gateway-tls-cert"},
	{"gateway-client-ca", "", "FILE", "PEM CA certificates: the gateway then requires client certificates signed by them (needs --gateway-tls-cert; reloaded on SIGHUP, a failed reload keeps the old CA)"},
	{"gateway-token-file", "", "FILE", `bearer tokens the gateway requires, one a line: "TOKEN pub=/robot/,/x/ sub=/robot/" (scope prefixes it may publish to and subscribe from; # comments); mode 600 or stricter; reloaded on SIGHUP`},
	{"gateway-origins", "", "PATTERN[,...]", "host:port patterns (path.Match syntax, e.g. app.example:*) of other origins whose pages may open a WebSocket to the gateway; by default only pages of the gateway's own host may"},
	{"gateway-meshmessage", valueOff, "off|HOST:PORT", "TCP address of the EventMesh TCP (meshmessage) listener: its clients publish, subscribe and call RSB methods by topic = scope; it shares the gateway's TLS and token file (the token in HELLO's user agent)"},
	{"gateway-a2a", valueOff, "off|on|SCOPE", "serve agents on the gateway: A2A JSON-RPC under /.a2a/SCOPE (agent cards at /.well-known/agent-card.json) and streamed calls under /.stream/SCOPE; a SCOPE given is the agent /.a2a itself reaches"},
	{"web-addr", valueOff, "off|HOST:PORT", "HTTP address of the introspection page and API (hosts, processes, participants, scope rates, a live tail; /api/introspection/snapshot and /search)"},
	{"join", "", "HOST:PORT[,...]", "gossip addresses of cluster members to join"},
	{"key-file", "", "FILE", `keys sealing every datagram and the gossip (AES-256-GCM), one "ID KEY" a line (id 1..255, 32 bytes in hex or base64; # comments; the first seals, all open); mode 600 or stricter; reloaded on SIGHUP. Without it the data plane is open to anyone on the network`},
	{"cluster-label", "", "NAME", "cluster name: gossip and sealed datagrams of another label are refused"},
	{"multicast", "true", "", "carry events by multicast; false sends to each interested peer (unicast)"},
	{"data-addr", node.DefaultDataAddr, "IP:PORT", "unicast UDP address for data, NACKs and repairs (port 0: any)"},
	{"advertise-addr", "", "IP:PORT", "gossip address told to peers (default: the bound one)"},
	{"interface", "", "NAME", "network interface for multicast (default: loopback, this host only)"},
	{"name", "", "NAME", "cluster node name (default: host name and a random suffix)"},
	{"max-datagram", valueAuto, "BYTES", `datagram size ("auto": 60000 on loopback, 1400 on a NIC)`},
	{"multicast-ttl", "1", "N", "multicast TTL (1 keeps datagrams on the local link)"},
	{"group-pool", defaultPool, "IP:PORT", "first multicast address of the group pool and its UDP port"},
	{"group-pool-size", strconv.Itoa(group.DefaultPoolSize), "N", "number of multicast addresses groups are spread over"},
	{"local", "false", "", "fast memberlist timings for clusters on one host (tests, laptops)"},
	{"socket-slow-client", "drop", "drop|disconnect", "what a full client send queue does"},
	{"socket-default-interest", "all", "all|none", "events for a client that announced no listener"},
	{"socket-queue-frames", strconv.Itoa(rsbsocket.DefaultQueueFrames), "N", "send queue bound per client, in frames"},
	{"socket-queue-bytes", strconv.Itoa(rsbsocket.DefaultQueueBytes), "BYTES", "send queue bound per client, in bytes"},
	{"socket-max-frame", strconv.Itoa(frame.DefaultMaxFrameSize), "BYTES", "largest frame a client may send"},
	{"socket-stall-timeout", rsbsocket.DefaultStallTimeout.String(), "DURATION", "how long a publisher waits for a full subscriber before it counts as stalled"},
	{"socket-max-connections", strconv.Itoa(rsbsocket.DefaultMaxConnections), "N", "client connections served at once (one more is closed at once and counted)"},
	{"socket-max-participants", strconv.Itoa(rsbsocket.DefaultMaxParticipants), "N", "introspection participants tracked per client (past it the client gets every event)"},
	{"socket-spin-wait", rsbsocket.DefaultSpinWait.String(), "DURATION", "how long a client's reader that relayed an event to a TCP client which answers at once polls for the answer before it sleeps (0: never)"},
	{"shutdown-flush", node.DefaultShutdownFlush.String(), "DURATION", "how long reliable streams may finish at shutdown"},
	{"interest-barrier", node.DefaultInterestBarrier.String(), "DURATION", "how long a new listener waits for its interest to reach the peers"},
	{"nack-tries", strconv.Itoa(qos.DefaultNackTries), "N", "NACKs in a row a reliable stream's receiver sends for a lost datagram, unanswered, before it may give it up"},
	{"nack-give-up", qos.DefaultGiveUpAfter.String(), "DURATION", "how long at least a reliable stream's receiver asks for a lost datagram its sender does not repeat before it gives it up and reports it lost"},
	{"spin-wait", transport.DefaultSpinWait.String(), "DURATION", "how long a UDP reader polls for the answer to a reply before it sleeps (0: never)"},
	{"cpu-latency", valueOff, "off|MICROSECONDS", "while running, ask that no CPU take longer to wake (0: idle CPUs poll instead of sleeping; halves round trips through a daemon on a VM, costs power; needs write access to " + cpuLatencyDevice + ")"},
	{"gc-floor", strconv.Itoa(gcfloor.DefaultFloorMiB), "off|MiB", "heap size below which the garbage collector stays idle; above it, it runs as GOGC=100 (at most a quarter of the cgroup's memory limit; ignored when GOGC or GOMEMLIMIT is set)"},
	{"log-level", "info", "debug|info|warn|error", "log level"},
	{"log-format", logAuto, "auto|text|json", "log format (auto: text on a terminal, JSON otherwise)"},
	{"ready-file", "", "PATH", "once serving, write the bound addresses to PATH as JSON"},
}

// key returns the configuration key the option sets.
func (o option) key() string { return config.FlagKey(o.flag) }

// cmdline holds the flags that are not configuration settings.
type cmdline struct {
	printConfig bool
	version     bool
}

// errHelp reports that --help was asked for; the usage has been printed.
var errHelp = errors.New("help requested")

// parseFlags parses args. Setting flags are kept in the returned FlagSet for
// config.SetFlags; errors (the usage is printed to stderr) are usage errors.
func parseFlags(args []string, stderr io.Writer) (*flag.FlagSet, cmdline, error) {
	var cl cmdline
	fs := flag.NewFlagSet("rsbd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { printUsage(stderr) }
	for _, o := range options {
		if o.arg == "" {
			fs.Bool(o.flag, false, o.usage)
		} else {
			fs.String(o.flag, "", o.usage)
		}
	}
	fs.BoolVar(&cl.printConfig, flagPrintConfig, false, "print the effective configuration and where each value came from, then exit")
	fs.BoolVar(&cl.version, flagVersion, false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, cl, errHelp
		}
		return nil, cl, err
	}
	if fs.NArg() > 0 {
		printUsage(stderr)
		return nil, cl, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return fs, cl, nil
}

// printUsage writes the --help text.
func printUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString("Usage: rsbd [flags]\n\n")
	b.WriteString("rsbd carries RSB events between the local RSB socket clients and the\n")
	b.WriteString("other rsbd daemons of the cluster. With no flags and no configuration\n")
	b.WriteString("file it serves this host alone; --join HOST:PORT makes a cluster.\n\n")
	b.WriteString(socketAccessUsage + "\n")
	b.WriteString("Every setting is also read from the RSB configuration cascade (/etc/rsb.conf,\n")
	b.WriteString("~/.config/rsb.conf, ./rsb.conf or RSB_CONFIG_FILES, then RSB_* variables),\n")
	b.WriteString("flags winning. Each flag's key is shown in brackets: rsbd.socket.addr is\n")
	b.WriteString("\"socket.addr = :55555\" in a file's [rsbd] section and RSB_RSBD_SOCKET_ADDR\n")
	b.WriteString("in the environment.\n\nFlags:\n")
	for _, o := range options {
		arg := ""
		if o.arg != "" {
			arg = " " + o.arg
		} else {
			arg = "=true|false"
		}
		def := o.def
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(&b, "  --%s%s\n      %s\n      [%s] default %s\n", o.flag, arg, o.usage, o.key(), def)
	}
	b.WriteString("  --print-config\n      print the effective configuration and where each value came from, then exit\n")
	b.WriteString("  --version\n      print the version and exit\n")
	b.WriteString("\nQuality of service of published events: RSB's qualityofservice.reliability\n")
	b.WriteString("(RELIABLE, UNRELIABLE) and qualityofservice.ordering (UNORDERED, ORDERED),\n")
	b.WriteString("overridden per scope in a [rsbd.qos] section: \"/robot/arm/ = RELIABLE,ORDERED\".\n")
	io.WriteString(w, b.String())
}
