package main

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"testing"
)

// currentCPULatency reads the request in force (the lowest of all held).
func currentCPULatency(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(cpuLatencyDevice)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		t.Skipf("no PM QoS device here: %v", err)
	}
	if err != nil || len(b) < 4 {
		t.Fatalf("reading %s: %d bytes, %v", cpuLatencyDevice, len(b), err)
	}
	return int(int32(binary.NativeEndian.Uint32(b)))
}

// TestHoldCPULatency: the request is in force while held and gone once
// closed.
func TestHoldCPULatency(t *testing.T) {
	before := currentCPULatency(t)
	if before <= 7 {
		t.Skipf("another process holds a request of %d µs already", before)
	}
	h, err := holdCPULatency(7)
	if errors.Is(err, fs.ErrPermission) {
		t.Skipf("cannot write %s: %v", cpuLatencyDevice, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := currentCPULatency(t); got != 7 {
		h.Close()
		t.Fatalf("while held: %d µs, want 7", got)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if got := currentCPULatency(t); got != before {
		t.Fatalf("after close: %d µs, want %d", got, before)
	}
}
