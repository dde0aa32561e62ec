package mesh

import (
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
)

// ReasonOther is the reason every reason set has besides its declared
// ones: a drop, refusal or close counted under a reason the set does not
// declare lands here, so no count is ever lost.
const ReasonOther = "other"

// Reasons declares the fixed reason labels of a listener's Counters. Each
// reason is 1 to MaxNameLen characters of a–z, 0–9 and '_'; ReasonOther is
// added to every set.
type Reasons struct {
	// Dropped are the reasons an event is not delivered or published.
	Dropped []string
	// Rejected are the reasons a request or message is refused.
	Rejected []string
	// Closed are the reasons the listener closes a client's connection.
	Closed []string
}

// Counters are the counters every gateway listener keeps, in one shape
// for all protocols, so the daemon exports them as one set of metric
// families labelled by protocol. A listener creates its Counters with
// NewCounters and feeds them as it works. Safe for concurrent use.
type Counters struct {
	protocol                 string
	published, delivered     atomic.Int64
	connections, subscribers atomic.Int64
	reasons                  Reasons
	// dropped, rejected and closed map every declared reason, and
	// ReasonOther, to its counter; they are read-only after NewCounters.
	dropped, rejected, closed map[string]*atomic.Int64
}

// NewCounters returns zeroed Counters of protocol with the reason sets of
// r. A bad protocol name or reason is a programming error and panics.
func NewCounters(protocol string, r Reasons) *Counters {
	if err := ValidName(protocol); err != nil {
		panic(err)
	}
	c := &Counters{protocol: protocol}
	c.reasons.Dropped, c.dropped = reasonSet(r.Dropped)
	c.reasons.Rejected, c.rejected = reasonSet(r.Rejected)
	c.reasons.Closed, c.closed = reasonSet(r.Closed)
	return c
}

// reasonSet returns the sorted reasons with ReasonOther added and a
// counter for each.
func reasonSet(reasons []string) ([]string, map[string]*atomic.Int64) {
	m := map[string]*atomic.Int64{ReasonOther: new(atomic.Int64)}
	for _, r := range reasons {
		if err := validReason(r); err != nil {
			panic(err)
		}
		m[r] = new(atomic.Int64)
	}
	return slices.Sorted(maps.Keys(m)), m
}

// validReason checks a reason label: 1 to MaxNameLen characters of a–z,
// 0–9 and '_'.
func validReason(r string) error {
	if r == "" || len(r) > MaxNameLen {
		return fmt.Errorf("%w: reason %q must have 1 to %d characters", ErrBadName, r, MaxNameLen)
	}
	for i := 0; i < len(r); i++ {
		if c := r[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return fmt.Errorf("%w: reason %q has %q at byte %d", ErrBadName, r, c, i)
		}
	}
	return nil
}

// count adds n to the counter of reason in m, or to ReasonOther's.
func count(m map[string]*atomic.Int64, reason string, n int64) {
	ctr, ok := m[reason]
	if !ok {
		ctr = m[ReasonOther]
	}
	ctr.Add(n)
}

// Protocol returns the protocol the counters belong to.
func (c *Counters) Protocol() string { return c.protocol }

// Reasons returns the reason sets, each sorted and with ReasonOther.
func (c *Counters) Reasons() Reasons {
	return Reasons{Dropped: slices.Clone(c.reasons.Dropped), Rejected: slices.Clone(c.reasons.Rejected),
		Closed: slices.Clone(c.reasons.Closed)}
}

// AddPublished counts n events published to the bus.
func (c *Counters) AddPublished(n int64) { c.published.Add(n) }

// AddDelivered counts n events written or queued to clients.
func (c *Counters) AddDelivered(n int64) { c.delivered.Add(n) }

// AddDropped counts n events not delivered or published, for reason.
func (c *Counters) AddDropped(reason string, n int64) { count(c.dropped, reason, n) }

// Reject counts one request or message refused, for reason.
func (c *Counters) Reject(reason string) { count(c.rejected, reason, 1) }

// Closed counts one client connection the listener closed, for reason.
func (c *Counters) Closed(reason string) { count(c.closed, reason, 1) }

// AddConnections moves the number of open client connections by delta
// and returns the new number.
func (c *Counters) AddConnections(delta int64) int64 { return c.connections.Add(delta) }

// AddSubscribers moves the number of open subscriptions by delta and
// returns the new number.
func (c *Counters) AddSubscribers(delta int64) int64 { return c.subscribers.Add(delta) }

// Stats are a snapshot of Counters.
type Stats struct {
	// Protocol names the listener's protocol.
	Protocol string
	// Published counts events published to the bus.
	Published int64
	// Delivered counts events written or queued to clients.
	Delivered int64
	// Connections is the number of client connections open now.
	Connections int64
	// Subscribers is the number of subscriptions open now.
	Subscribers int64
	// Dropped, Rejected and Closed count by reason; every reason of the
	// set is present, zero or not.
	Dropped, Rejected, Closed map[string]int64
}

// Stats returns a snapshot of the counters.
func (c *Counters) Stats() Stats {
	return Stats{Protocol: c.protocol, Published: c.published.Load(), Delivered: c.delivered.Load(),
		Connections: c.connections.Load(), Subscribers: c.subscribers.Load(),
		Dropped: load(c.dropped), Rejected: load(c.rejected), Closed: load(c.closed)}
}

// load reads every counter of a reason set.
func load(m map[string]*atomic.Int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for r, ctr := range m {
		out[r] = ctr.Load()
	}
	return out
}
