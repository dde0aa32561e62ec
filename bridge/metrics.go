package bridge

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the rsbd_bridge_* families every bridge shares, labelled
// by bridge name and direction (DirIn, DirOut).
type Metrics struct {
	// Up is 1 while a route works and 0 while it fails.
	Up *prometheus.GaugeVec
	// Messages counts events moved.
	Messages *prometheus.CounterVec
	// Drops counts events lost, by reason.
	Drops *prometheus.CounterVec
	// Retries counts failed sends that are tried again.
	Retries *prometheus.CounterVec
	// Reconnects counts receivers and senders started again after a
	// failure.
	Reconnects *prometheus.CounterVec
	// DeadLetters counts messages sent to the dead-letter destination, by
	// reason.
	DeadLetters *prometheus.CounterVec
}

// NewMetrics makes the families and registers them with reg (nil: not
// registered). Registering twice with one registry reuses the families
// already there, so several bridges of one daemon share them.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	bd := []string{"bridge", "direction"}
	bdr := []string{"bridge", "direction", "reason"}
	m := &Metrics{
		Up: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rsbd_bridge_up",
			Help: "1 while the bridge's route in this direction works, 0 while it fails."}, bd),
		Messages: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbd_bridge_messages_total",
			Help: "Events the bridge moved in this direction."}, bd),
		Drops: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbd_bridge_drops_total",
			Help: "Events the bridge lost in this direction, by reason."}, bdr),
		Retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbd_bridge_retries_total",
			Help: "Failed sends the bridge tried again."}, bd),
		Reconnects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbd_bridge_reconnects_total",
			Help: "Times the bridge started a receiver or sender again after a failure."}, bd),
		DeadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbd_bridge_dead_letters_total",
			Help: "Messages the bridge sent to its dead-letter destination, by reason."}, bdr),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	m.Up = register(reg, m.Up, &err)
	m.Messages = register(reg, m.Messages, &err)
	m.Drops = register(reg, m.Drops, &err)
	m.Retries = register(reg, m.Retries, &err)
	m.Reconnects = register(reg, m.Reconnects, &err)
	m.DeadLetters = register(reg, m.DeadLetters, &err)
	return m, err
}

// register registers c with reg, or returns the collector already
// registered under its name; a failure is recorded in *err.
func register[C prometheus.Collector](reg prometheus.Registerer, c C, err *error) C {
	if e := reg.Register(c); e != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(e, &are) {
			if old, ok := are.ExistingCollector.(C); ok {
				return old
			}
		}
		*err = errors.Join(*err, e)
	}
	return c
}
