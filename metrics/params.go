package metrics

import "time"

// Namespace prefixes every rsbd metric family.
const Namespace = "rsbd"

// EventSizeBuckets are the upper bounds, in bytes, of rsbd_event_size_bytes: powers of 4
// from 64 B to 16 MiB, the default maximum event size.
var EventSizeBuckets = []float64{64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20}

// LatencyBuckets are the upper bounds, in seconds, of rsbd_delivery_latency_seconds:
// 100 µs (loopback socket hop) to 10 s (repairs after long outages).
var LatencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Limits of the HTTP server behind /metrics, /livez and /readyz.
const (
	// ReadHeaderTimeout bounds how long a client may take to send request headers.
	ReadHeaderTimeout = 5 * time.Second
	// ReadTimeout bounds reading a whole request; the endpoints take no bodies.
	ReadTimeout = 10 * time.Second
	// WriteTimeout bounds writing a response; it exceeds ScrapeTimeout.
	WriteTimeout = 30 * time.Second
	// IdleTimeout closes idle keep-alive connections.
	IdleTimeout = 60 * time.Second
	// MaxHeaderBytes bounds request headers.
	MaxHeaderBytes = 8 << 10
	// MaxHTTPConns bounds the connections served at once; more wait to be
	// accepted, so a client opening connections without end cannot grow
	// the daemon's memory.
	MaxHTTPConns = 64
	// ScrapeTimeout bounds gathering metrics for one /metrics request.
	ScrapeTimeout = 20 * time.Second
	// MaxScrapesInFlight bounds concurrent /metrics requests; more get 503.
	MaxScrapesInFlight = 4
)
