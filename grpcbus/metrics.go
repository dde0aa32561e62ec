package grpcbus

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the rsbd_grpc_* families. Side is "client" or "server".
type metrics struct {
	calls   *prometheus.CounterVec // side, method, code
	open    *prometheus.GaugeVec   // side
	stalls  *prometheus.CounterVec // side
	missed  *prometheus.CounterVec // side
	dropped *prometheus.CounterVec // side, reason
	side    string
}

// newMetrics builds the families for side and registers them on reg (when
// set); families another ClientConn or Server registered first are shared.
func newMetrics(reg prometheus.Registerer, side string) *metrics {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbd_grpc_calls_total",
			Help: "gRPC calls over the bus finished, by side, full method and status code."},
			[]string{"side", "method", "code"}),
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rsbd_grpc_open_streams",
			Help: "gRPC streams over the bus now open, by side."}, []string{"side"}),
		stalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbd_grpc_window_stalls_total",
			Help: "Messages a stream could not send at once because the peer's window was spent."},
			[]string{"side"}),
		missed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbd_grpc_heartbeats_missed_total",
			Help: "Pings not answered within a ping interval, and streams given up for silence."},
			[]string{"side"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbd_grpc_frames_dropped_total",
			Help: "Frames and replies dropped, by side and reason (unknown stream, malformed, overflow)."},
			[]string{"side", "reason"}),
		side: side,
	}
	if reg != nil {
		m.calls = register(reg, m.calls)
		m.open = register(reg, m.open)
		m.stalls = register(reg, m.stalls)
		m.missed = register(reg, m.missed)
		m.dropped = register(reg, m.dropped)
	}
	return m
}

// register registers c on reg, or returns the collector already there.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if prev, ok := are.ExistingCollector.(C); ok {
			return prev
		}
	}
	return c
}

func (m *metrics) call(method, code string) { m.calls.WithLabelValues(m.side, method, code).Inc() }
func (m *metrics) streamOpened()            { m.open.WithLabelValues(m.side).Inc() }
func (m *metrics) streamClosed()            { m.open.WithLabelValues(m.side).Dec() }
func (m *metrics) stall()                   { m.stalls.WithLabelValues(m.side).Inc() }
func (m *metrics) missedBeat()              { m.missed.WithLabelValues(m.side).Inc() }
func (m *metrics) drop(reason string)       { m.dropped.WithLabelValues(m.side, reason).Inc() }

// Drop reasons.
const (
	dropUnknownStream = "unknown_stream"
	dropMalformed     = "malformed"
	dropOverflow      = "overflow"
	dropUnexpected    = "unexpected"
	dropDuplicate     = "duplicate"
)
