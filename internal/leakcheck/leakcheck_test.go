package leakcheck

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestWaitReturnsOnceGoroutinesEnd: a goroutine that ends after Wait began
// is waited for.
func TestWaitReturnsOnceGoroutinesEnd(t *testing.T) {
	before := runtime.NumGoroutine()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { <-stop; close(done) }()
	go func() { close(stop) }()
	Wait(t, before, 10*time.Second)
	<-done
}

// TestWaitFailsOnLeak: goroutines that never end fail the check, and the
// dump names them. It leaks three: the goroutines of the other test (two)
// may still be ending after before was read, which must not hide the leak.
func TestWaitFailsOnLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	block := make(chan struct{})
	defer close(block)
	for range 3 {
		go leaky(block)
	}
	ft := &fakeT{TB: t}
	func() {
		defer func() { _ = recover() }()
		Wait(ft, before, 50*time.Millisecond)
	}()
	if !strings.Contains(ft.msg, "leakcheck.leaky") {
		t.Fatalf("no failure naming the leaked goroutine: %q", ft.msg)
	}
}

func leaky(block chan struct{}) { <-block }

// fakeT records Fatalf instead of ending the test.
type fakeT struct {
	testing.TB
	msg string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}
