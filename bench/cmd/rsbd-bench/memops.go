package main

import (
	"context"
	"encoding/json"
	"runtime"
	"time"

	"github.com/rsbd/rsbd/bench/internal/agent"
)

// settledHeap returns the live heap after background work (the node's
// interest loop) had a moment to finish and two collections ran.
func settledHeap() uint64 {
	time.Sleep(300 * time.Millisecond)
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
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
