package brokertest

import "time"

// Timers of the broker starters.
const (
	// readyTimeout bounds a broker's start until its port accepts: a
	// RabbitMQ node boots in seconds on an idle machine and takes several
	// times that on a loaded test host.
	readyTimeout = 90 * time.Second
	// stopTimeout bounds the wait for a killed broker to exit.
	stopTimeout = 30 * time.Second
	// pollEvery is how often the starters try the port.
	pollEvery = 50 * time.Millisecond
)
