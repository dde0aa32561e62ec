package sinks

import (
	"testing"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// TestMatchCache: the cache answers what the table answers, through
// subscriptions added and removed and scopes switched.
func TestMatchCache(t *testing.T) {
	tab := NewTable()
	var c MatchCache
	fn := func(*notification.Event) {}
	check := func(sc string, want int) {
		t.Helper()
		s := scope.MustParse(sc)
		direct := tab.Matching(nil, s)
		got := c.Matching(tab, s)
		if len(got) != want || len(direct) != want {
			t.Fatalf("%s: cache %d, table %d subscriptions, want %d", sc, len(got), len(direct), want)
		}
		for i := range got {
			if got[i] != direct[i] {
				t.Fatalf("%s: Subscription %d differs", sc, i)
			}
		}
	}
	check("/a/b/", 0)
	idA := tab.Add(scope.MustParse("/a/"), fn, nil)
	check("/a/b/", 1)
	check("/a/b/", 1)
	tab.Add(scope.MustParse("/"), fn, nil)
	check("/a/b/", 2)
	check("/x/", 1)
	check("/a/b/", 2)
	tab.Remove(scope.MustParse("/a/"), idA)
	check("/a/b/", 1)
	tab.Add(scope.MustParse("/a/b/c/"), fn, nil)
	check("/a/b/", 1)
	check("/a/b/c/d/", 2)
}
