package main

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"runtime"
	"time"
)

// The busy-host condition: a robot's control loop shares its CPUs with
// planners, drivers and perception, so every round-trip series runs a
// second time while load processes of the bench's own compete for the
// CPUs. There is one load process per CPU, each at nice 0 like the systems
// under test, burning its CPU in short bursts with sleeps between: a duty
// cycle, so that the scheduler has to hand the CPU back and forth at the
// moments a real busy host does, rather than a constant hog every system
// would simply share. Every system of a run gets the same load.

// busyStage is the stage name (--only busy) and busySuffix marks the figure
// keys measured under load.
const (
	busyStage  = "busy"
	busySuffix = "_busy"
)

// The load's duty cycle: each process spins for burnDuty of every
// burnPeriod and sleeps for the rest; its first period starts at a random
// phase so that the processes do not burst in step.
const (
	burnPeriod = 10 * time.Millisecond
	burnDuty   = 0.6
)

// wantsBusy says whether the round trips also run on a busy host.
func (r *runner) wantsBusy() bool { return r.only == nil || r.only[busyStage] }

// busy runs fn, round trips of system sys, again under the load; fn gets
// the key prefix of the busy condition. A load that cannot start fails the
// condition with a note, once.
func (r *runner) busy(sys string, fn func(sys string)) {
	if !r.wantsBusy() || r.busyErr != nil {
		return
	}
	l, err := startLoad(r.exe, runtime.NumCPU())
	if err != nil {
		r.busyErr = err
		r.notes = append(r.notes, "round trips on a busy host: not measured ("+err.Error()+")")
		return
	}
	defer l.stop()
	fn(sys + busySuffix)
}

// load is the running load processes.
type load struct{ cmds []*exec.Cmd }

// startLoad starts n load processes of exe (this program with --burn).
// They die with the bench if it dies first.
func startLoad(exe string, n int) (*load, error) {
	l := &load{}
	for range n {
		c := exec.Command(exe, "--burn")
		c.SysProcAttr = dieWithParent()
		if err := c.Start(); err != nil {
			l.stop()
			return nil, fmt.Errorf("starting a load process: %w", err)
		}
		l.cmds = append(l.cmds, c)
	}
	return l, nil
}

// stop kills the load processes and reaps them.
func (l *load) stop() {
	for _, c := range l.cmds {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	l.cmds = nil
}

// runBurn is a load process: one thread spinning for burnDuty of every
// burnPeriod until it is killed.
func runBurn() {
	runtime.GOMAXPROCS(1)
	on := time.Duration(float64(burnPeriod) * burnDuty)
	next := time.Now().Add(rand.N(burnPeriod))
	time.Sleep(time.Until(next))
	for {
		end := next.Add(on)
		for time.Now().Before(end) { // reading the clock is the burn
		}
		next = next.Add(burnPeriod)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		} else {
			next = time.Now()
		}
	}
}
