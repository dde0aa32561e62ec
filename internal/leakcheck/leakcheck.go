package leakcheck

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// pollEvery is how often Wait looks at the goroutine count.
const pollEvery = 5 * time.Millisecond

// Wait polls until the program runs at most before goroutines, failing t
// after timeout with a dump of the goroutines that are not the test
// runner's. Goroutines of earlier tests that are still ending only make it
// wait longer.
func Wait(t testing.TB, before int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), before, NotRunner(string(buf)))
		}
		tm := time.NewTimer(pollEvery)
		<-tm.C
	}
}

// NotRunner keeps the goroutines of a runtime.Stack dump that are not the
// test runner's.
func NotRunner(dump string) string {
	var keep []string
	for _, g := range strings.Split(dump, "\n\n") {
		if !strings.Contains(g, "testing.tRunner") && !strings.Contains(g, "testing.(*T).Run") {
			keep = append(keep, g)
		}
	}
	return strings.Join(keep, "\n\n")
}
