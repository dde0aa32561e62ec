package bridge

import "time"

// Limits and timers of the runner.
const (
	// maxQuotedName bounds an entry name of a broker message quoted in an
	// error (MapAttrs), so hostile names cannot flood the logs.
	maxQuotedName = 64

	// DefaultQueueLen bounds the outbound queue of a bridge in events: what
	// the bus delivers while the broker is slow or away waits here, and
	// what does not fit is dropped and counted (the bus never waits).
	DefaultQueueLen = 4096

	// DefaultQueueBytes bounds the outbound queue in bytes of data, so
	// large events cannot pile up memory.
	DefaultQueueBytes = 64 << 20

	// DefaultBatchSize bounds the events of one Send: enough to amortize a
	// broker round trip, small enough that a retried batch is cheap.
	DefaultBatchSize = 256

	// DefaultBackoff is the first wait after a failed send or receive;
	// each further failure doubles it up to DefaultMaxBackoff.
	DefaultBackoff = 100 * time.Millisecond

	// DefaultMaxBackoff caps the wait between attempts, so a broker that
	// comes back is used again within this time.
	DefaultMaxBackoff = 10 * time.Second

	// ReconnectAfter is how many Sends in a row may fail before the runner
	// makes a new Sender: a client whose connection is broken beyond its own
	// repair gets a fresh one.
	ReconnectAfter = 3

	// DeadLetterAttempts bounds the tries of sending one dead letter to a
	// broker address; after them it is dropped and counted, so a dead
	// destination never stalls the bridge.
	DeadLetterAttempts = 3

	// ProbeEvery is how long an outbound route waits without events before
	// it probes its broker (Prober), so /readyz tells an idle bridge whose
	// broker went away.
	ProbeEvery = 5 * time.Second

	// LogEvery is the shortest time between two log lines about drops or
	// dead letters of one bridge and direction; the counters count every
	// one.
	LogEvery = time.Second
)
