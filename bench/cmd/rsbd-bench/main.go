package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// options are the command-line flags.
type options struct {
	agent      bool
	quick      bool
	md, json   string
	pin        bool
	profileDir string
	// profileClients also profiles the publisher and subscriber processes
	// of the runs, a peer's client processes too (each side then pays the
	// profiler's few per cent in its clients).
	profileClients bool
	only           string
	logPath        string
	noPoll         bool
	// latencyOnly runs the round trips of the chosen stages only.
	latencyOnly bool
	// traceDir receives execution traces of the rsbd processes' round trips.
	traceDir string
	// spinWait replaces the rsbd nodes' default poll for an answer.
	spinWait time.Duration
	// burn makes the process one of the busy stage's load processes.
	burn bool
}

func main() {
	var o options
	flag.BoolVar(&o.agent, "agent", false, "internal: run as a worker process driven over stdin/stdout")
	flag.BoolVar(&o.quick, "quick", false, "smoke run: a tenth of the events, shorter peer runs (about 2 minutes)")
	flag.StringVar(&o.md, "md", "", "write the table as Markdown to this file")
	flag.StringVar(&o.json, "json", "", "write the table as JSON to this file")
	flag.BoolVar(&o.pin, "pin", false, "pin publishers/pingers to CPU 0 and subscribers/pongers to CPU 1 with taskset (daemons and servers float)")
	flag.StringVar(&o.profileDir, "profile-dir", "", "write CPU profiles of the rsbd processes of every throughput run to this directory")
	flag.BoolVar(&o.profileClients, "profile-clients", false, "with --profile-dir, also profile the publisher and subscriber processes of the runs (the peers' client processes too)")
	flag.StringVar(&o.only, "only", "", "comma-separated stages to run: "+strings.Join(stageNames, ",")+
		" (busy alone: every system's round trips, quiet and on a busy host, nothing else)")
	flag.StringVar(&o.logPath, "log", "", "file for the worker processes' logs (default: a file in the temporary directory)")
	flag.BoolVar(&o.noPoll, "no-idle-poll", false, "skip the second round-trip series with idle CPUs polling (PM QoS request on /dev/cpu_dma_latency, needs root)")
	flag.BoolVar(&o.latencyOnly, "latency-only", false, "run only the round trips of the chosen stages (no throughput, no scaling)")
	flag.StringVar(&o.traceDir, "trace-dir", "", "write execution traces (runtime/trace) of the rsbd processes of every round-trip run to this directory")
	flag.DurationVar(&o.spinWait, "spin-wait", 0, "the rsbd nodes' UDP reader poll for an answer (default: the node's; negative: never poll)")
	flag.BoolVar(&o.burn, "burn", false, "internal: run as a load process of the busy stage")
	flag.Parse()

	if o.burn {
		runBurn()
		return
	}
	if o.agent {
		if err := runAgent(); err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "rsbd-bench:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	r, err := newRunner(o)
	if err != nil {
		return err
	}
	defer r.close()
	start := time.Now()
	r.notes = append(r.notes, "load average at start: "+loadAverage())
	for _, st := range r.stages() {
		if !r.wants(st.name) {
			continue
		}
		r.latOnly = r.latencyOnly(st.name)
		r.logf("== stage %s", st.name)
		if err := st.fn(); err != nil {
			r.logf("stage %s failed: %v", st.name, err)
			r.notes = append(r.notes, fmt.Sprintf("stage %s failed: %v", st.name, err))
		}
	}
	r.notes = append(r.notes, "load average at end: "+loadAverage())
	tb := r.table(start)
	md := tb.Markdown()
	fmt.Print(md)
	if o.md != "" {
		if err := os.WriteFile(o.md, []byte(md), 0o644); err != nil {
			return err
		}
	}
	if o.json != "" {
		b, err := tb.JSON()
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.json, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	r.logf("done in %v; worker logs in %s", time.Since(start).Round(time.Second), r.logPath)
	return nil
}
