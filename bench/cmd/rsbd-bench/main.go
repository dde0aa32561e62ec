// Command rsbd-bench measures rsbd side by side with Cyclone DDS (ddsperf)
// and NATS on this machine in one run and prints one table of every figure
// with the ratio rsbd/peer per row.
//
// What it runs, each side in its own process (the binary re-executes itself
// as an agent, see package agent):
//
//   - rsbd embedded, two processes, peer to peer over loopback multicast,
//     reliable: throughput at 64 B, 1 KiB, 64 KiB and 1 MiB, and ping-pong
//     round trips at 64 B and 1 KiB;
//   - rsbd through one daemon with RSB socket clients, and through two
//     daemons (publisher → daemon A → multicast → daemon B → subscriber):
//     the same figures;
//   - Cyclone DDS's ddsperf (reliable, loopback) and NATS (nats-server and
//     nats.go, client → server → client): the same sizes and layout;
//   - a raw Go UDP ping-pong, the floor of a datagram round trip;
//   - scaling on one daemon: 1, 100 and 10,000 scopes, 1, 100 and 1,000
//     socket listeners, and the memory of an idle subscription.
//
// Every throughput run probes until the path carries events, sends a
// warm-up burst and then the measured events without a pause; the
// subscriber times first and last measured arrival. A run of a reliable
// system that loses an event is reported as FAIL, not as a rate.
//
// Usage:
//
//	rsbd-bench [--quick] [--md FILE] [--json FILE] [--pin] [--profile-dir DIR] [--only LIST]
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
	only       string
	logPath    string
}

func main() {
	var o options
	flag.BoolVar(&o.agent, "agent", false, "internal: run as a worker process driven over stdin/stdout")
	flag.BoolVar(&o.quick, "quick", false, "smoke run: a tenth of the events, shorter peer runs (about 2 minutes)")
	flag.StringVar(&o.md, "md", "", "write the table as Markdown to this file")
	flag.StringVar(&o.json, "json", "", "write the table as JSON to this file")
	flag.BoolVar(&o.pin, "pin", false, "pin publishers/pingers to CPU 0 and subscribers/pongers to CPU 1 with taskset (daemons and servers float)")
	flag.StringVar(&o.profileDir, "profile-dir", "", "write CPU profiles of the rsbd processes of every throughput run to this directory")
	flag.StringVar(&o.only, "only", "", "comma-separated stages to run: "+strings.Join(stageNames, ","))
	flag.StringVar(&o.logPath, "log", "", "file for the worker processes' logs (default: a file in the temporary directory)")
	flag.Parse()

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
	for _, st := range r.stages() {
		if !r.wants(st.name) {
			continue
		}
		r.logf("== stage %s", st.name)
		if err := st.fn(); err != nil {
			r.logf("stage %s failed: %v", st.name, err)
			r.notes = append(r.notes, fmt.Sprintf("stage %s failed: %v", st.name, err))
		}
	}
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
