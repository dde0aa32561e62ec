package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"

	"github.com/rsbd/rsbd/bench/internal/agent"
)

// Recordings of the rsbd processes of a run: CPU profiles of throughput
// runs (--profile-dir) and execution traces of round-trip runs
// (--trace-dir), the scheduler's view of where a slow round trip waited
// (go tool trace; its -pprof=sched profile shows where goroutines waited
// to run, -pprof=syscall the blocking system calls).

// recorder is one kind of recording a worker makes into a file.
type recorder struct {
	start func(io.Writer) error
	stop  func()
}

// recorders are the kinds of recording by the name of the operation that
// starts them ("un" + name ends them).
var recorders = map[string]recorder{
	"profile": {start: pprof.StartCPUProfile, stop: pprof.StopCPUProfile},
	"trace":   {start: trace.Start, stop: trace.Stop},
}

// recordOps returns the operations that start and end each kind of
// recording.
func (s *agentState) recordOps() map[string]agent.Op {
	ops := map[string]agent.Op{}
	for name := range recorders {
		ops[name] = func(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
			return nil, s.startRecording(name, raw)
		}
		ops["un"+name] = func(context.Context, json.RawMessage, agent.Progress) (any, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			return nil, s.stopRecording(name)
		}
	}
	return ops
}

// startRecording starts a recording of kind name into the file Addr.
func (s *agentState) startRecording(name string, raw json.RawMessage) error {
	a, err := args[addrArgs](raw)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recording[name] != nil {
		return fmt.Errorf("%s already running", name)
	}
	f, err := os.Create(a.Addr)
	if err != nil {
		return err
	}
	if err := recorders[name].start(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	if s.recording == nil {
		s.recording = map[string]*os.File{}
	}
	s.recording[name] = f
	return nil
}

// stopRecording ends the recording of kind name, if one runs; s.mu is
// held.
func (s *agentState) stopRecording(name string) error {
	f := s.recording[name]
	if f == nil {
		return nil
	}
	recorders[name].stop()
	delete(s.recording, name)
	return f.Close()
}

// startRecordings starts a recording of kind op by each of procs into dir,
// each file named by file, and returns the function that ends them.
func (r *runner) startRecordings(op, dir string, procs []*agent.Process, file func(*agent.Process) string) func() {
	if dir == "" || len(procs) == 0 {
		return func() {}
	}
	var started []*agent.Process
	for _, p := range procs {
		path := filepath.Join(dir, file(p))
		if err := p.Do(op, addrArgs{Addr: path}, setupTimeout, nil); err != nil {
			r.logf("%s %s: %v", op, path, err)
			continue
		}
		started = append(started, p)
	}
	return func() {
		for _, p := range started {
			if err := p.Do("un"+op, nil, setupTimeout, nil); err != nil {
				r.logf("stop %s: %v", op, err)
			}
		}
	}
}
