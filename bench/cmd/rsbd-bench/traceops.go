package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"

	"github.com/rsbd/rsbd/bench/internal/agent"
)

// Execution traces of round trips (--trace-dir): each rsbd process of a
// round-trip run writes a runtime/trace of the run, the scheduler's view of
// where a slow round trip waited (go tool trace; its -pprof=sched profile
// shows where goroutines waited to run, -pprof=syscall the blocking system
// calls).

// opTrace starts an execution trace of this worker into the file Addr.
func (s *agentState) opTrace(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[addrArgs](raw)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trace != nil {
		return nil, errors.New("trace already running")
	}
	f, err := os.Create(a.Addr)
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("execution trace: %w", err)
	}
	s.trace = f
	return nil, nil
}

// opUntrace ends the execution trace, if one runs.
func (s *agentState) opUntrace(context.Context, json.RawMessage, agent.Progress) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nil, s.stopTrace()
}

// stopTrace ends the trace under way; s.mu is held.
func (s *agentState) stopTrace() error {
	if s.trace == nil {
		return nil
	}
	trace.Stop()
	err := s.trace.Close()
	s.trace = nil
	return err
}

// startTraces starts execution traces of the rsbd processes of round-trip
// run t, named after its system and size, and returns the function that
// ends them.
func (r *runner) startTraces(t latRun) func() {
	if r.o.traceDir == "" || len(t.procs) == 0 {
		return func() {}
	}
	var started []*agent.Process
	for _, p := range t.procs {
		name := fmt.Sprintf("%s-%d-%s.trace", strings.ReplaceAll(t.sys, "/", "_"), t.size, p.Name())
		path := filepath.Join(r.o.traceDir, name)
		if err := p.Do("trace", addrArgs{Addr: path}, setupTimeout, nil); err != nil {
			r.logf("trace %s: %v", path, err)
			continue
		}
		started = append(started, p)
	}
	return func() {
		for _, p := range started {
			if err := p.Do("untrace", nil, setupTimeout, nil); err != nil {
				r.logf("stop trace: %v", err)
			}
		}
	}
}
