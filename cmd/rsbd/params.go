package main

import "time"

// Defaults and bounds of the daemon around the node. The node's own limits
// live in node/params.go.
const (
	// DefaultMetricsAddr serves /metrics, /livez and /readyz on the loopback
	// interface only: a Prometheus on another host needs --metrics-addr
	// :9555 (or a specific interface), a choice the operator makes.
	DefaultMetricsAddr = "127.0.0.1:9555"

	// shutdownTimeout bounds node.Close after the first signal (socket
	// shutdown, reliable flush and leaving the cluster take a few seconds
	// at most); past it rsbd exits non-zero without waiting longer.
	shutdownTimeout = 15 * time.Second

	// metricsCloseTimeout bounds the wait for scrapes in progress at exit.
	metricsCloseTimeout = 2 * time.Second

	// gatewayHeaderTimeout bounds how long a gateway client may take to
	// send its request headers: a client that opens connections and sends
	// nothing holds little for long.
	gatewayHeaderTimeout = 10 * time.Second

	// gatewayCloseTimeout bounds the wait for gateway requests in progress
	// at exit (subscriptions end at once).
	gatewayCloseTimeout = 2 * time.Second

	// webReadHeaderTimeout bounds how long a client of --web-addr may take
	// to send its request headers; webCloseTimeout bounds the wait for its
	// requests at exit (tails end at once).
	webReadHeaderTimeout = 10 * time.Second
	webCloseTimeout      = time.Second

	// statusScopes is how many scopes, the busiest, a daemon's status lists
	// one by one; the rest are summed in one row.
	statusScopes = 32

	// tokenFileForbiddenMode are the permission bits a gateway token file
	// must not have: like an ssh key, its secrets are for its owner alone.
	tokenFileForbiddenMode = 0o077

	// keyFileForbiddenMode are the permission bits a key file (--key-file)
	// must not have: its keys are for its owner alone.
	keyFileForbiddenMode = 0o077

	// cpuLatencyDevice is the kernel's PM QoS interface for the CPU wake-up
	// latency: a request lasts while its file stays open.
	cpuLatencyDevice = "/dev/cpu_dma_latency"
	// maxCPULatency bounds --cpu-latency (one second, in microseconds).
	maxCPULatency = 1_000_000
	// maxGCFloorMiB bounds --gc-floor (1 TiB).
	maxGCFloorMiB = 1 << 20
)

// Exit codes.
const (
	exitOK      = 0 // clean shutdown, --version, --print-config, --help
	exitFailure = 1 // could not start, or shutdown cut short
	exitUsage   = 2 // bad flags, arguments or configuration values
)

// Log formats of --log-format.
const (
	logAuto = "auto" // text on a terminal, JSON otherwise
	logText = "text"
	logJSON = "json"
)
