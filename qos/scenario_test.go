package qos

import (
	"fmt"
	"testing"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

var reliableClasses = []datagram.Class{datagram.ReliableUnordered, datagram.ReliableOrdered}

// firstSentAtOrAfter returns the first event id published at or after t.
func (s *sim) firstSentAtOrAfter(t time.Duration) int {
	for id, at := range s.sentAt[:s.sent] {
		if at.Sub(simBase) >= t {
			return id
		}
	}
	return -1
}

// TestBlackoutWithinRetention cuts one of two receivers off for 2 s (2,000
// datagrams at 1,000/s, well inside the 10 s retention) under 1% loss:
// everything must be delivered, the blackout caught up within a second of
// the heal.
func TestBlackoutWithinRetention(t *testing.T) {
	t.Parallel()
	for _, class := range reliableClasses {
		t.Run(className(class), func(t *testing.T) {
			t.Parallel()
			from, heal := time.Second, 3*time.Second
			s := newSim(t, simConfig{class: class, n: 5000, interval: time.Millisecond,
				receivers: 2, loss: 0.01, seed: 5, blackouts: [][]span{{{from: from, to: heal}}}})
			s.run(s.resolved)
			checkReliable(t, s)
			n := s.nodes[0]
			var last time.Time
			for id := s.firstSentAtOrAfter(from); id < s.sent && s.sentAt[id].Sub(simBase) < heal; id++ {
				if n.deliverAt[id].After(last) {
					last = n.deliverAt[id]
				}
			}
			if catchUp := last.Sub(simBase.Add(heal)); catchUp > time.Second {
				t.Errorf("catch-up took %v after the heal, want <= 1s", catchUp)
			} else {
				t.Logf("catch-up done %v after the heal", catchUp)
			}
			logStats(t, s)
		})
	}
}

// TestUnresponsiveSender stops the sender from hearing NACKs half-way: from
// then on, holes are NACKed in vain and must be reported (retries
// exhausted) after about GiveUpAfter; every number is delivered or
// reported, never both.
func TestUnresponsiveSender(t *testing.T) {
	t.Parallel()
	for _, class := range reliableClasses {
		t.Run(className(class), func(t *testing.T) {
			t.Parallel()
			const cut = time.Second
			var s *sim
			s = newSim(t, simConfig{class: class, n: 2000, interval: time.Millisecond, receivers: 2,
				loss: 0.05, seed: 21, drop: func(to int, d *datagram.Datagram) bool {
					return to < 0 && s.now.Sub(simBase) >= cut
				}})
			s.run(s.resolved)
			for i, n := range s.nodes {
				if uint64(n.delivered)+n.lost != uint64(s.cfg.n) || n.lost == 0 {
					t.Errorf("receiver %d: %d delivered + %d reported lost, want %d with some lost",
						i, n.delivered, n.lost, s.cfg.n)
				}
				for _, l := range n.losses {
					if l.Reason != ReasonRetriesExhausted {
						t.Errorf("receiver %d: unexpected loss %+v", i, l)
					}
					if l.Range.First < uint64(cut/time.Millisecond)-10 {
						t.Errorf("receiver %d: loss %+v before the sender stopped answering", i, l)
					}
					if wait := l.At.Sub(s.sentAt[l.Range.Last-1]); wait > DefaultGiveUpAfter+DefaultNackIntervalMax+50*time.Millisecond {
						t.Errorf("receiver %d: loss of %v reported after %v", i, l.Range, wait)
					}
					for seq := l.Range.First; seq <= l.Range.Last; seq++ {
						if n.count[seq-1] != 0 {
							t.Errorf("receiver %d: seq %d delivered and reported lost", i, seq)
						}
					}
				}
			}
			logStats(t, s)
		})
	}
}

// TestBlackoutBeyondRetention cuts a receiver off for longer than the sender
// retains data: the receiver must get exactly one LossReport, for the evicted
// part of its hole, and everything after it (the other receiver everything).
func TestBlackoutBeyondRetention(t *testing.T) {
	t.Parallel()
	for _, class := range reliableClasses {
		t.Run(className(class), func(t *testing.T) {
			t.Parallel()
			from, to := 400*time.Millisecond, 1200*time.Millisecond
			s := newSim(t, simConfig{class: class, n: 10000, interval: 200 * time.Microsecond,
				receivers: 2, seed: 9, sender: SenderConfig{RetainAge: 200 * time.Millisecond},
				blackouts: [][]span{{{from: from, to: to}}}})
			s.run(s.resolved)
			n := s.nodes[0]
			if len(n.losses) != 1 {
				t.Fatalf("receiver 0 got %d loss reports, want 1: %+v", len(n.losses), n.losses)
			}
			l := n.losses[0]
			wantFirst := uint64(s.firstSentAtOrAfter(from)) + 1
			if l.Range.First != wantFirst || l.Range.Last < l.Range.First || l.Reason != ReasonGone {
				t.Errorf("loss %+v, want a GONE range starting at %d", l, wantFirst)
			}
			for id := range s.cfg.n {
				seq := uint64(id) + 1
				inLoss := seq >= l.Range.First && seq <= l.Range.Last
				if inLoss == (n.count[id] == 1) {
					t.Fatalf("seq %d: delivered %d times, in loss range %v", seq, n.count[id], inLoss)
				}
			}
			// The evicted part is what left retention while cut off: the hole
			// minus the last RetainAge of it.
			evicted := time.Duration(l.Range.Len()) * s.cfg.interval
			if evicted < to-from-250*time.Millisecond || evicted > to-from {
				t.Errorf("lost %d datagrams (%v of traffic), want about %v", l.Range.Len(), evicted, to-from-200*time.Millisecond)
			}
			if other := s.nodes[1]; other.delivered != s.cfg.n || len(other.losses) != 0 {
				t.Errorf("receiver 1: delivered %d, losses %+v", other.delivered, other.losses)
			}
			logStats(t, s)
		})
	}
}

// TestTailLoss drops the last datagram to every receiver; the sender then
// goes idle. Its heartbeat must reveal the loss and the repair arrive within
// 50 ms of the publication.
func TestTailLoss(t *testing.T) {
	t.Parallel()
	for rx := 1; rx <= 3; rx++ {
		for _, class := range reliableClasses {
			t.Run(fmt.Sprintf("rx=%d/%s", rx, className(class)), func(t *testing.T) {
				t.Parallel()
				const n = 500
				s := newSim(t, simConfig{class: class, n: n, interval: time.Millisecond, receivers: rx, seed: 3,
					drop: func(_ int, d *datagram.Datagram) bool {
						return d.Kind == datagram.KindData && d.Seq == n && d.Flags&datagram.FlagRepair == 0
					}})
				s.run(s.resolved)
				checkReliable(t, s)
				for i, node := range s.nodes {
					if lat := node.deliverAt[n-1].Sub(s.sentAt[n-1]); lat > 50*time.Millisecond || lat <= 0 {
						t.Errorf("receiver %d: tail repaired after %v, want <= 50ms", i, lat)
					} else {
						t.Logf("receiver %d: tail repaired after %v", i, lat)
					}
				}
			})
		}
	}
}

// TestSenderRestart switches the sender to a new instance id mid-stream:
// receivers must pick up the new stream from its first datagram (no stale
// duplicate suppression from the old one, whose numbers it reuses) and free
// the old stream once it has been idle for IdleTimeout.
func TestSenderRestart(t *testing.T) {
	t.Parallel()
	for _, class := range allClasses {
		t.Run(className(class), func(t *testing.T) {
			t.Parallel()
			const n, restart = 2000, 250
			s := newSim(t, simConfig{class: class, n: n, interval: 20 * time.Millisecond, receivers: 2,
				seed: 11, restartAt: restart})
			s.run(nil)
			old, cur := s.senders[0].Key(), s.senders[1].Key()
			for i, node := range s.nodes {
				if node.delivered != n {
					t.Errorf("receiver %d delivered %d of %d", i, node.delivered, n)
				}
				st := node.table.Stats()
				if node.table.Lookup(old) != nil || node.table.Lookup(cur) == nil || node.table.Len() != 1 {
					t.Errorf("receiver %d: old stream kept %v, new stream present %v, %d streams",
						i, node.table.Lookup(old) != nil, node.table.Lookup(cur) != nil, node.table.Len())
				}
				if st.StreamsOpened != 2 || st.StreamsIdle < 1 {
					t.Errorf("receiver %d: opened %d streams, freed %d idle", i, st.StreamsOpened, st.StreamsIdle)
				}
			}
		})
	}
}
