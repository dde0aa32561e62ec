package faultnet

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"
)

// ErrConfig means a Config or Faults field is out of range.
var ErrConfig = errors.New("faultnet: invalid config")

// Faults are the impairments of one direction of a link. The zero value is
// a perfect link: no loss, no duplication, no delay.
type Faults struct {
	// Loss is the probability that a datagram is lost, independently of
	// the others.
	Loss float64
	// Burst adds bursty loss on top of Loss.
	Burst Burst
	// Duplicate is the probability that a datagram that is not lost
	// arrives twice (each copy with its own delay).
	Duplicate float64
	// Delay is the base one-way delay.
	Delay time.Duration
	// Jitter adds a delay drawn uniformly from [0, Jitter) to every
	// datagram; datagrams sent closer together than that get reordered.
	Jitter time.Duration
	// Reorder is the probability that a datagram is held back by an extra
	// ReorderDelay, so datagrams sent after it overtake it.
	Reorder float64
	// ReorderDelay is the hold-back of a reordered datagram.
	ReorderDelay time.Duration
}

// Burst is a Gilbert-Elliott loss model: a two-state chain stepped once per
// datagram. In the good state datagrams pass; the chain moves to the bad
// state with probability Enter, where each datagram is lost with
// probability BadLoss, and returns with probability Exit. The mean burst
// (run of bad-state datagrams) is 1/Exit datagrams and the long-run loss
// rate Enter/(Enter+Exit)*BadLoss. Enter 0 disables the model.
type Burst struct {
	Enter, Exit float64
	// BadLoss is the loss probability in the bad state; 0 means 1.
	BadLoss float64
}

// Validate reports the first field out of range, wrapping ErrConfig.
func (f Faults) Validate() error {
	for _, p := range []struct {
		name string
		v    float64
	}{
		{"Loss", f.Loss}, {"Duplicate", f.Duplicate}, {"Reorder", f.Reorder},
		{"Burst.Enter", f.Burst.Enter}, {"Burst.Exit", f.Burst.Exit}, {"Burst.BadLoss", f.Burst.BadLoss},
	} {
		if !(p.v >= 0 && p.v <= 1) {
			return fmt.Errorf("%w: %s %v outside [0, 1]", ErrConfig, p.name, p.v)
		}
	}
	if f.Delay < 0 || f.Jitter < 0 || f.ReorderDelay < 0 {
		return fmt.Errorf("%w: negative delay", ErrConfig)
	}
	if f.Burst.Enter > 0 && f.Burst.Exit == 0 {
		return fmt.Errorf("%w: Burst.Exit 0 would never leave the bad state", ErrConfig)
	}
	return nil
}

// link is one direction between two endpoints: its generator, its burst
// state and its counters.
type link struct {
	rng   *rand.Rand
	bad   bool // Gilbert-Elliott state
	stats Stats
}

func newLink(seed uint64, from, to netip.AddrPort) *link {
	return &link{rng: rand.New(rand.NewPCG(seed, mix(from, to)))}
}

// mix hashes the link's addresses into a generator seed (splitmix64 steps).
func mix(from, to netip.AddrPort) uint64 {
	a, b := from.Addr().As4(), to.Addr().As4()
	h := uint64(0x9e3779b97f4a7c15)
	for _, v := range []uint64{
		uint64(a[0])<<24 | uint64(a[1])<<16 | uint64(a[2])<<8 | uint64(a[3]), uint64(from.Port()),
		uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3]), uint64(to.Port()),
	} {
		h += v + 0x9e3779b97f4a7c15
		h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
		h = (h ^ h>>27) * 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

// fate decides what happens to one datagram on the link: the delays of its
// copies (none if lost). It appends to delays and returns it.
func (l *link) fate(f *Faults, delays []time.Duration) []time.Duration {
	if f.Burst.Enter > 0 {
		if l.bad {
			l.bad = l.rng.Float64() >= f.Burst.Exit
		} else {
			l.bad = l.rng.Float64() < f.Burst.Enter
		}
		badLoss := f.Burst.BadLoss
		if badLoss == 0 {
			badLoss = 1
		}
		if l.bad && l.rng.Float64() < badLoss {
			l.stats.BurstLost++
			return delays
		}
	}
	if f.Loss > 0 && l.rng.Float64() < f.Loss {
		l.stats.Lost++
		return delays
	}
	copies := 1
	if f.Duplicate > 0 && l.rng.Float64() < f.Duplicate {
		copies = 2
		l.stats.Duplicated++
	}
	for range copies {
		d := f.Delay
		if f.Jitter > 0 {
			d += time.Duration(l.rng.Int64N(int64(f.Jitter)))
		}
		if f.Reorder > 0 && l.rng.Float64() < f.Reorder {
			d += f.ReorderDelay
			l.stats.Reordered++
		}
		delays = append(delays, d)
	}
	return delays
}
