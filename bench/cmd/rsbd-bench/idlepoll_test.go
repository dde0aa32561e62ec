package main

import (
	"errors"
	"io/fs"
	"testing"
)

// TestHoldCPULatency: the request is in force while held and gone after
// release (when this host lets the test make it).
func TestHoldCPULatency(t *testing.T) {
	before, err := currentCPULatency()
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		t.Skipf("no PM QoS device here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if before == 0 {
		t.Skip("another process holds a 0 µs request already")
	}
	h, err := holdCPULatency(0)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := currentCPULatency(); err != nil || v != 0 {
		h.release()
		t.Fatalf("while held: %d µs, %v; want 0", v, err)
	}
	if err := h.release(); err != nil {
		t.Fatal(err)
	}
	if v, err := currentCPULatency(); err != nil || v != before {
		t.Fatalf("after release: %d µs, %v; want %d", v, err, before)
	}
}

// TestPolledSkipsWithoutDevice: a runner that cannot make the request runs
// no polled series, notes why once, and does not retry.
func TestPolledSkipsWithoutDevice(t *testing.T) {
	r := &runner{pollErr: nil, o: options{noPoll: true}}
	ran := false
	r.polled("x", func(string) { ran = true })
	if ran || len(r.notes) != 0 {
		t.Fatalf("--no-idle-poll ran the series (%v) or noted %q", ran, r.notes)
	}
	r = &runner{pollErr: errors.New("earlier failure")}
	r.polled("x", func(string) { ran = true })
	if ran {
		t.Fatal("ran after the request had failed")
	}
	r = &runner{}
	var got string
	h, err := holdCPULatency(0)
	if err != nil {
		r.polled("x", func(s string) { got = s })
		if got != "" || r.pollErr == nil || len(r.notes) != 1 {
			t.Fatalf("without the device: ran %q, pollErr %v, notes %q", got, r.pollErr, r.notes)
		}
		return
	}
	_ = h.release()
	r.polled("x", func(s string) { got = s })
	if got != "x"+pollSuffix {
		t.Fatalf("polled series got key %q, want %q", got, "x"+pollSuffix)
	}
}
