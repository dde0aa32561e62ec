package testutil

import (
	"testing"
	"time"
)

// WaitFor polls cond every PollEvery until it holds and returns how long
// that took; it fails the test when timeout passes first.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	return WaitForMsg(t, timeout, func() string { return what }, cond)
}

// WaitForMsg is WaitFor with a description computed only on failure, for a
// message that reports the state the test found.
func WaitForMsg(t testing.TB, timeout time.Duration, what func() string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	if cond() {
		return 0
	}
	tick := time.NewTicker(PollEvery)
	defer tick.Stop()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case <-tick.C:
		case <-deadline.C:
			if cond() {
				return time.Since(start)
			}
			t.Fatalf("timed out after %v waiting for %s", timeout, what())
		}
		if cond() {
			return time.Since(start)
		}
	}
}
