package node

import (
	"fmt"
	"sync"
	"testing"

	"github.com/rsbd/rsbd/scope"
)

func TestScopeTableCounts(t *testing.T) {
	tb := newScopeTable()
	a, b := scope.MustParse("/a/"), scope.MustParse("/b/c/")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				tb.published(a, 10)
			}
			for range 100 {
				tb.delivered(b, 7)
			}
		})
	}
	wg.Wait()
	got := map[string]ScopeCount{}
	for _, c := range tb.counts() {
		got[c.Scope] = c
	}
	if c := got["/a/"]; c.PublishedEvents != 4000 || c.PublishedBytes != 40000 || c.DeliveredEvents != 0 {
		t.Errorf("/a/ %+v", c)
	}
	if c := got["/b/c/"]; c.DeliveredEvents != 400 || c.DeliveredBytes != 2800 || c.PublishedEvents != 0 {
		t.Errorf("/b/c/ %+v", c)
	}
	if len(got) != 2 {
		t.Errorf("rows %v", got)
	}
}

// TestScopeTableOther fills the table past its slots: every event is
// counted once, either in a scope's row or in the other row, and no more
// rows than slots exist.
func TestScopeTableOther(t *testing.T) {
	tb := newScopeTable()
	const n = 3 * scopeSlots
	for i := range n {
		tb.published(scope.MustParse(fmt.Sprintf("/s%d/", i)), 1)
	}
	rows := tb.counts()
	var total uint64
	other := false
	for _, c := range rows {
		total += c.PublishedEvents
		other = other || c.Scope == ""
	}
	if total != n || !other || len(rows) > scopeSlots+1 {
		t.Errorf("%d rows, other row %v, %d events counted of %d", len(rows), other, total, n)
	}
}

// BenchmarkScopeTable is the per-event cost of counting by scope, from
// parallel goroutines on a few scopes.
func BenchmarkScopeTable(b *testing.B) {
	scs := []scope.Scope{scope.MustParse("/bench/a/"), scope.MustParse("/bench/b/"), scope.MustParse("/robot/camera/frames/")}
	tb := newScopeTable()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			tb.published(scs[i%len(scs)], 64)
			i++
		}
	})
}
