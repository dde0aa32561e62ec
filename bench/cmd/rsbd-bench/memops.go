package main

import (
	"context"
	"encoding/json"
	"runtime"
	"time"

	"github.com/rsbd/rsbd/bench/internal/agent"
)

// settledHeap returns the live heap once background work (the node's
// interest loop, writer goroutines finishing a burst) has finished: two
// collections after a pause, repeated until two readings agree (settle).
// On a slow host a single reading 300 ms after a relayed Hello storm still
// counted about 20 MB that the writers let go within the next second.
func settledHeap() uint64 {
	return settle(func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}, settlePause, settleTries)
}

// Settling of heap readings.
const (
	// settlePause precedes every reading.
	settlePause = 300 * time.Millisecond
	// settleTries bounds the readings of one measurement.
	settleTries = 10
	// settleTolerance is how far apart two readings that agree may be, as
	// a fraction of the lower one.
	settleTolerance = 0.01
)

// settle calls read after pause until two consecutive readings agree
// within settleTolerance, and returns the second; after tries readings it
// returns the last.
func settle(read func() uint64, pause time.Duration, tries int) uint64 {
	var prev uint64
	for i := range max(tries, 1) {
		time.Sleep(pause)
		cur := read()
		if i > 0 && agree(prev, cur) {
			return cur
		}
		prev = cur
	}
	return prev
}

// agree reports whether a and b are within settleTolerance of each other.
func agree(a, b uint64) bool {
	lo, hi := min(a, b), max(a, b)
	return float64(hi-lo) <= settleTolerance*float64(lo)
}

// opMemstats measures the heap once a daemon has written out what its
// socket clients were sent (a burst of relayed Hellos is not idle memory).
func (s *agentState) opMemstats(ctx context.Context, _ json.RawMessage, _ agent.Progress) (any, error) {
	s.mu.Lock()
	emb := s.emb
	s.mu.Unlock()
	if emb != nil {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		deadline := time.Now().Add(drainLimit)
		for frames, _ := emb.Node().SocketBacklog(); frames > 0 && time.Now().Before(deadline); frames, _ = emb.Node().SocketBacklog() {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-tick.C:
			}
		}
	}
	return memStats(), nil
}

// drainLimit bounds how long a memory measurement waits for a daemon's
// socket queues to drain.
const drainLimit = 30 * time.Second

// memStats returns the settled live heap and the memory taken from the OS.
func memStats() memResult {
	heap := settledHeap()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memResult{HeapAlloc: heap, Sys: m.Sys}
}
