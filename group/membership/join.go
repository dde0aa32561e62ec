package membership

import (
	"errors"
	"math/rand/v2"
	"time"
)

// ErrJoining is returned by StartJoining when the join loop already runs.
var ErrJoining = errors.New("membership: already joining")

// joinBackoff is the join loop's schedule, a pure function of what the
// loop saw. While the node has a peer it checks again every min; while it
// is alone it contacts the seeds after a delay that starts at min and
// doubles up to max, so that seeds which are down are not hammered and a
// seed that comes up is found within max.
type joinBackoff struct {
	min, max time.Duration
	cur      time.Duration // the delay after the last failed attempt; 0: none failed
}

// next returns the wait before the next check: alone says whether the node
// was still without a peer after this check (and its attempt, if any).
// jitter, in [0, 1), spreads the retries of many nodes over a quarter of
// the delay.
func (b *joinBackoff) next(alone bool, jitter float64) time.Duration {
	if !alone {
		b.cur = 0
		return b.min
	}
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(2*b.cur, b.max)
	}
	return b.cur + time.Duration(jitter*float64(b.cur)/4)
}

// StartJoining starts the join loop: it contacts the seeds ("host" or
// "host:port") at once, in the background, and again whenever this node
// has no peer, backing off from JoinRetry to JoinRetryMax while none of
// them answers. One peer is enough: gossip brings the rest. A node thus
// finds its cluster whatever the order in which the daemons start, and
// after losing every peer. The loop ends with Leave (a node that announced
// its departure must not join again) or Close, which aborts an attempt
// under way (its dials and connections; see stoppableTransport).
func (m *Membership) StartJoining(seeds []string) error {
	if len(seeds) == 0 {
		return nil
	}
	m.life.RLock()
	defer m.life.RUnlock()
	switch {
	case m.closed:
		return ErrClosed
	case !m.joining.CompareAndSwap(false, true):
		return ErrJoining
	}
	m.joinEnded = make(chan struct{})
	m.wg.Add(1)
	go m.joinLoop(append([]string(nil), seeds...))
	return nil
}

// joinLoop is the join loop's goroutine; it exits when stop is closed or
// an attempt finds the membership leaving or closing.
func (m *Membership) joinLoop(seeds []string) {
	defer m.wg.Done()
	defer close(m.joinEnded)
	b := joinBackoff{min: m.joinRetry, max: m.joinMax}
	timer := time.NewTimer(0)
	defer timer.Stop()
	failed, hadPeers := false, false
	for {
		select {
		case <-m.stop:
			return
		case <-timer.C:
		}
		alone := m.numMembers.Load() == 0
		if alone && hadPeers {
			m.log.Info("membership: no peer left; contacting the seeds again", "seeds", seeds)
		}
		if alone {
			if !m.joinAttempt(seeds, failed) {
				return // closing
			}
			alone = m.numMembers.Load() == 0
			failed = alone
		}
		hadPeers = !alone
		timer.Reset(b.next(alone, rand.Float64()))
	}
}

// joinAttempt contacts the seeds once and counts the outcome as memberlist
// reports it: ok when a seed answered, failed when none did. (Whether the
// node has a peer is the loop's own test: a seed that got this node's state
// may still bring it in after an exchange that timed out here.) It reports
// false when the membership is leaving or closing. Only the first of a row
// of fruitless attempts is logged as a warning.
func (m *Membership) joinAttempt(seeds []string, failedBefore bool) bool {
	// Close holds the lock exclusively while it waits for this loop: a
	// join must not queue behind it.
	if !m.life.TryRLock() {
		return false
	}
	defer m.life.RUnlock()
	if m.closed || m.leaving.Load() {
		return false
	}
	reached, err := m.ml.Join(seeds)
	if err != nil {
		m.stats.joinsFailed.Add(1)
	} else {
		m.stats.joinsOK.Add(1)
	}
	if m.numMembers.Load() > 0 {
		m.log.Info("membership joined", "seeds_reached", reached)
		return true
	}
	level := m.log.Warn
	if failedBefore {
		level = m.log.Debug
	}
	if err != nil {
		level("membership: no seed reachable; retrying while alone", "seeds", seeds, "err", err)
	} else {
		level("membership: the seeds reached know no other member; retrying while alone", "seeds", seeds)
	}
	return true
}
