package web

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/scope"
)

// ScopeRate is one scope's row of /api/scopes: the events published on it
// (not its sub-scopes), their bytes, and the rates over the last
// RateWindow.
type ScopeRate struct {
	Scope     string  `json:"scope"`
	Events    uint64  `json:"events"`
	Bytes     uint64  `json:"bytes"`
	EventRate float64 `json:"events-per-second"`
	ByteRate  float64 `json:"bytes-per-second"`
}

// counts is one scope's counters.
type counts struct {
	events, bytes         uint64
	lastEvents, lastBytes uint64
	eventRate, byteRate   float64
}

// rates counts events per scope through a listener on "/", opened on
// demand and closed when idle.
type rates struct {
	bus *client.Bus

	mu       sync.Mutex
	listener *client.Listener
	table    map[string]*counts
	lastAsk  time.Time
	lastTick time.Time
	stop     chan struct{}
	wg       sync.WaitGroup
}

func newRates(bus *client.Bus) *rates {
	return &rates{bus: bus, table: make(map[string]*counts)}
}

// snapshot opens the listener if needed and returns the rows sorted by
// scope.
func (r *rates) snapshot() ([]ScopeRate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastAsk = time.Now()
	if r.listener == nil {
		if err := r.open(); err != nil {
			return nil, err
		}
	}
	out := make([]ScopeRate, 0, len(r.table))
	for sc, c := range r.table {
		out = append(out, ScopeRate{Scope: sc, Events: c.events, Bytes: c.bytes, EventRate: c.eventRate, ByteRate: c.byteRate})
	}
	slices.SortFunc(out, func(a, b ScopeRate) int { return strings.Compare(a.Scope, b.Scope) })
	return out, nil
}

// open starts the listener and the ticker; r.mu is held.
func (r *rates) open() error {
	l, err := r.bus.NewListener(scope.Root, client.WithInlineDelivery())
	if err != nil {
		return err
	}
	l.AddHandler(r.count)
	r.listener, r.lastTick, r.stop = l, time.Now(), make(chan struct{})
	r.wg.Add(1)
	go r.tick(r.stop)
	return nil
}

// count adds one event.
func (r *rates) count(ev *client.Event) error {
	sc := ev.Scope.String()
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.table[sc]
	if c == nil {
		if len(r.table) >= maxScopes {
			sc = otherScopes
		}
		if c = r.table[sc]; c == nil {
			c = &counts{}
			r.table[sc] = c
		}
	}
	c.events++
	c.bytes += uint64(len(ev.Data))
	return nil
}

// tick computes rates each RateWindow and closes the listener when idle.
func (r *rates) tick(stop chan struct{}) {
	defer r.wg.Done()
	t := time.NewTicker(RateWindow)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			if r.update(now) {
				return
			}
		}
	}
}

// update computes the rates; it closes the listener and reports true
// when nobody asked for IdleRates.
func (r *rates) update(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Sub(r.lastAsk) > IdleRates {
		r.closeLocked()
		return true
	}
	secs := now.Sub(r.lastTick).Seconds()
	r.lastTick = now
	for _, c := range r.table {
		c.eventRate = float64(c.events-c.lastEvents) / secs
		c.byteRate = float64(c.bytes-c.lastBytes) / secs
		c.lastEvents, c.lastBytes = c.events, c.bytes
	}
	return false
}

// closeLocked closes the listener; r.mu is held.
func (r *rates) closeLocked() {
	if r.listener == nil {
		return
	}
	l := r.listener
	r.listener = nil
	close(r.stop)
	// Closing waits for running handlers, which take r.mu: unlock.
	r.mu.Unlock()
	l.Close()
	r.mu.Lock()
}

// close ends the listener and the ticker.
func (r *rates) close() {
	r.mu.Lock()
	r.closeLocked()
	r.mu.Unlock()
	r.wg.Wait()
}
