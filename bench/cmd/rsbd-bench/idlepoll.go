package main

import (
	"encoding/binary"
	"fmt"
	"os"
)

// The second latency condition: idle CPUs poll instead of halting. On a
// virtual machine a halted virtual CPU takes tens of microseconds to wake,
// and a round trip through a broker wakes one four times; a host tuned for
// latency (tuned's latency-performance profile, the real-time guides of
// robot middleware) keeps its CPUs from sleeping with a PM QoS request on
// /dev/cpu_dma_latency. The bench makes that request (0 µs: only the
// polling idle state is allowed) for the second round-trip series of every
// system alike, and drops it afterwards.

// pollSuffix marks the figure keys of the polled condition.
const pollSuffix = "_poll"

// cpuLatencyDevice is the PM QoS interface of the CPU wake-up latency.
const cpuLatencyDevice = "/dev/cpu_dma_latency"

// cpuLatencyHold is a held PM QoS request: it lasts while the file is open.
type cpuLatencyHold struct{ f *os.File }

// holdCPULatency asks that no CPU take longer than us microseconds to wake.
func holdCPULatency(us int32) (*cpuLatencyHold, error) {
	f, err := os.OpenFile(cpuLatencyDevice, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], uint32(us))
	if _, err := f.Write(b[:]); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", cpuLatencyDevice, err)
	}
	return &cpuLatencyHold{f: f}, nil
}

// release drops the request.
func (h *cpuLatencyHold) release() error { return h.f.Close() }

// currentCPULatency reads the PM QoS target in force, in microseconds.
func currentCPULatency() (int32, error) {
	b, err := os.ReadFile(cpuLatencyDevice)
	if err != nil {
		return 0, err
	}
	if len(b) < 4 {
		return 0, fmt.Errorf("%s: read %d bytes", cpuLatencyDevice, len(b))
	}
	return int32(binary.NativeEndian.Uint32(b)), nil
}

// polled runs fn, the round trips of system sys, again with idle CPUs
// polling; fn gets the key prefix of that condition. Without the device
// (or the right to write it) the condition is skipped once, with a note.
func (r *runner) polled(sys string, fn func(sys string)) {
	if r.o.noPoll || r.pollErr != nil || r.latOnly {
		return
	}
	h, err := holdCPULatency(0)
	if err != nil {
		r.pollErr = err
		r.notes = append(r.notes, "round trips with idle CPUs polling: not measured ("+err.Error()+")")
		return
	}
	defer func() {
		if err := h.release(); err != nil {
			r.logf("releasing the CPU latency request: %v", err)
		}
	}()
	if v, err := currentCPULatency(); err != nil || v != 0 {
		r.logf("CPU latency request not in force (%d µs, %v)", v, err)
	}
	fn(sys + pollSuffix)
}
