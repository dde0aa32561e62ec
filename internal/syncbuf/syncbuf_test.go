package syncbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWriters: lines written from several goroutines all arrive
// whole while another goroutine reads (run with -race).
func TestConcurrentWriters(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				fmt.Fprintf(&b, "w%d line %d\n", w, i)
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			_ = b.String()
		}
	}()
	wg.Wait()
	<-done
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d lines, want 400", len(lines))
	}
	for _, l := range lines {
		var w, i int
		if _, err := fmt.Sscanf(l, "w%d line %d", &w, &i); err != nil {
			t.Fatalf("torn line %q: %v", l, err)
		}
	}
}

func TestTail(t *testing.T) {
	var b Buffer
	if got := b.Tail(3); got != "" {
		t.Fatalf("empty: %q", got)
	}
	b.Write([]byte("a\nb\nc\nd\n"))
	if got := b.Tail(2); got != "c\nd" {
		t.Fatalf("Tail(2) = %q", got)
	}
	if got := b.Tail(10); got != "a\nb\nc\nd" {
		t.Fatalf("Tail(10) = %q", got)
	}
}
