package main

import (
	"fmt"
	"math/rand/v2"

	"github.com/rsbd/rsbd/bench/internal/agent"
)

// The raw references: what the structure of a layout costs on this
// machine without any protocol work. Their pingers write a ping and read
// its echo on one goroutine; their echoes write back on the goroutine that
// read.

// refLatency runs the round trips of a raw reference whose pinger runs in
// agent ping (the echo runs on its own, so latRun has no ponger).
func (r *runner) refLatency(sys, label string, ping *agent.Process) {
	for _, size := range latencySizes {
		l := r.latency(latRun{ping: ping, size: size, in: "/" + sys + "/", out: "/" + sys + "/"})
		l.set(r, sys, size)
		r.logLat(label, size, l)
	}
}

// refMcast: raw Go UDP ping-pong over loopback multicast between two
// processes, pings to group A, pongs to group B.
func (r *runner) refMcast() error {
	base := fmt.Sprintf("239.255.%d.", 20+rand.IntN(200))
	groupA, groupB := base+"250", base+"251" // the ports are ephemeral
	e, err := r.spawn("mcast-echo", roleSub)
	if err != nil {
		r.fail(err, allKeys(sysMcast, false)...)
		return err
	}
	var c *agent.Process
	defer func() { r.closeAll(c, e) }()
	err = func() error {
		var res addrResult
		if err := e.Do("mcast-echo", addrArgs{Addr: groupA, Group: groupB}, setupTimeout, &res); err != nil {
			return err
		}
		if c, err = r.spawn("mcast-ping", rolePub); err != nil {
			return err
		}
		return c.Do("mcast", addrArgs{Addr: res.Addr, Group: groupB}, setupTimeout, nil)
	}()
	if err != nil {
		r.fail(err, allKeys(sysMcast, false)...)
		return fmt.Errorf("raw multicast reference: %w", err)
	}
	r.refLatency(sysMcast, "raw UDP multicast", c)
	r.polled(sysMcast, func(ps string) { r.refLatency(ps, "raw UDP multicast (idle CPUs poll)", c) })
	r.busy(sysMcast, func(bs string) { r.refLatency(bs, "raw UDP multicast (busy host)", c) })
	return nil
}

// refRelay: raw Go relay in the one-daemon layout: a pinger process and an
// echo process connected through a relay process, over loopback TCP or
// Unix sockets.
func (r *runner) refRelay(sys string, unix bool) error {
	what := map[bool]string{false: "raw TCP relay", true: "raw Unix socket relay"}[unix]
	relay, err := r.spawn(sys, roleServer)
	if err != nil {
		r.fail(err, allKeys(sys, false)...)
		return err
	}
	var e, c *agent.Process
	defer func() { r.closeAll(c, e, relay) }()
	err = func() error {
		var res addrResult
		if err := relay.Do("tcp-relay", relayArgs{Unix: unix}, setupTimeout, &res); err != nil {
			return err
		}
		if e, err = r.spawn(sys+"-echo", roleSub); err != nil {
			return err
		}
		if err := e.Do("tcp-echo", addrArgs{Addr: res.Addr}, setupTimeout, nil); err != nil {
			return err
		}
		if c, err = r.spawn(sys+"-ping", rolePub); err != nil {
			return err
		}
		return c.Do("tcp", addrArgs{Addr: res.Addr}, setupTimeout, nil)
	}()
	if err != nil {
		r.fail(err, allKeys(sys, false)...)
		return fmt.Errorf("%s reference: %w", what, err)
	}
	r.refLatency(sys, what, c)
	r.polled(sys, func(ps string) { r.refLatency(ps, what+" (idle CPUs poll)", c) })
	r.busy(sys, func(bs string) { r.refLatency(bs, what+" (busy host)", c) })
	return nil
}

// withPeerNote returns the key of the reference figure ref with a note
// giving peer's figure as a multiple of it (NATS against the relay), or ref
// itself when either figure is missing or failed.
func (r *runner) withPeerNote(ref, peer, peerName string) string {
	rf, pf := r.figs[ref], r.figs[peer]
	if !rf.OK() || !pf.OK() {
		return ref
	}
	key := ref + "+" + peer
	note := fmt.Sprintf("%s %s µs = %.2f× this", peerName, fmtMicro(pf.Value), pf.Value/rf.Value)
	if rf.Note != "" {
		note = rf.Note + "; " + note
	}
	rf.Note = note
	r.figs[key] = rf
	return key
}

// fmtMicro formats microseconds with three significant digits.
func fmtMicro(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
