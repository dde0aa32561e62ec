package testutil

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitForReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	took := WaitFor(t, 10*time.Second, "three polls", func() bool { return n.Add(1) >= 3 })
	if n.Load() != 3 {
		t.Fatalf("polled %d times, want 3", n.Load())
	}
	if took <= 0 || took > 5*time.Second {
		t.Fatalf("took %v", took)
	}
}

func TestWaitForImmediate(t *testing.T) {
	if took := WaitFor(t, time.Second, "true", func() bool { return true }); took != 0 {
		t.Fatalf("took %v for a condition that held at once", took)
	}
}

// fatalRecorder is a testing.TB whose Fatalf records the failure and stops
// the goroutine as the testing package's does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = format
	panic(f)
}

func TestWaitForFailsAfterTimeout(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	func() {
		defer func() {
			if r := recover(); r != rec {
				t.Fatalf("recovered %v, want the recorder's stop", r)
			}
		}()
		WaitForMsg(rec, 20*time.Millisecond, func() string { return "never" }, func() bool { return false })
	}()
	if rec.msg == "" {
		t.Fatal("WaitFor did not fail after its timeout")
	}
}
