package engine

import (
	"fmt"
	"log/slog"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node/interest"
	"github.com/rsbd/rsbd/transport"
)

// Env is what the engine needs of the node around it. Its fields are
// concrete where the engine uses them per datagram or per event (metrics,
// the group pool, the wanted set); Sinks and the functions are called per
// batch, section or scrape.
type Env struct {
	// Conn is where datagrams go.
	Conn transport.Conn
	// Groups gives each group's multicast address (unused with
	// Config.Unicast).
	Groups *group.Pool
	// Interest returns the peers' interest table: which groups to send and,
	// with Config.Unicast, to whom. The engine reads it per publish.
	Interest func() group.InterestReader
	// Wanted is the set of groups the local sinks want; the engine drops
	// datagrams of other groups.
	Wanted *interest.WantedSet
	// Sinks takes the deliveries a socket reader makes itself and answers
	// for the local clients' back-pressure.
	Sinks Sinks
	// RecordsRecycled, if set, returns how many record slabs the node's
	// own carver gave back, added to the engine's count of recycled
	// buffers in the metrics.
	RecordsRecycled func() uint64
	// Metrics counts what the engine sends, receives and drops.
	Metrics *metrics.Metrics
	// Log receives the engine's logs; nil means slog.Default().
	Log *slog.Logger
}

// Sinks is the local side of the engine's deliveries.
type Sinks interface {
	// Deliver runs ds in order on the caller's goroutine. stable says
	// their bodies outlive the call (else they lie in a reader's buffer).
	Deliver(ds []Delivery, stable bool)
	// InlineLimit is the most event bytes a socket reader delivers itself
	// rather than through the delivering goroutine.
	InlineLimit() int
	// Answered tells the transport that the delivery a reader just made
	// was answered from its goroutine (it may poll for the next answer).
	Answered()
	// Backlogged reports whether some local client could not take what
	// may still arrive, reserve bytes measured as its queue counts them:
	// the engine then holds its ACKs.
	Backlogged(reserve int) bool
}

func (env *Env) validate() error {
	if env.Conn == nil || env.Interest == nil || env.Wanted == nil || env.Sinks == nil || env.Metrics == nil {
		return fmt.Errorf("%w: Conn, Interest, Wanted, Sinks and Metrics are required", ErrEnv)
	}
	if env.Groups == nil {
		return fmt.Errorf("%w: Groups is required", ErrEnv)
	}
	if env.Log == nil {
		env.Log = slog.Default()
	}
	return nil
}
