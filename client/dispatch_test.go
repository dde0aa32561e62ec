package client

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// testSink records the events it is given, by name.
type testSink struct {
	name string
	sc   scope.Scope
	log  *[]string
	on   func() // called on each delivery, if set
}

func (s *testSink) sinkScope() scope.Scope { return s.sc }

func (s *testSink) deliver(item) {
	*s.log = append(*s.log, s.name)
	if s.on != nil {
		s.on()
	}
}

// TestDispatcherMatches: an event reaches the sinks on its scope and its
// super-scopes, each once and those of one scope in the order added, and
// no sink on a sub-scope or a sibling; removed sinks get nothing, and a
// second removal changes nothing. With few sinks the dispatcher scans a
// list; with more it looks them up in its index.
func TestDispatcherMatches(t *testing.T) {
	all := [][2]string{{"root", "/"}, {"a", "/a/"}, {"ab", "/a/b/"}, {"ab2", "/a/b/"},
		{"abc", "/a/b/c/"}, {"ax", "/a/x/"}, {"b", "/b/"}}
	cases := []struct {
		sc   string
		want []string
	}{
		{"/a/b/", []string{"root", "a", "ab", "ab2"}},
		{"/a/b/c/d/", []string{"root", "a", "ab", "ab2", "abc"}},
		{"/a/", []string{"root", "a"}},
		{"/", []string{"root"}},
		{"/c/", []string{"root"}},
		{"/a/xy/", []string{"root", "a"}},
	}
	for _, n := range []int{dispatchSmall, len(all)} {
		t.Run(fmt.Sprintf("sinks=%d", n), func(t *testing.T) {
			var d dispatcher
			var log []string
			added := map[string]bool{}
			var rmAB func()
			for _, s := range all[:n] {
				rm := d.add(&testSink{name: s[0], sc: mustScope(s[1]), log: &log})
				added[s[0]] = true
				if s[0] == "ab" {
					rmAB = rm
				}
			}
			if small := d.small.Load() != nil; small != (n <= dispatchSmall) {
				t.Fatalf("%d sinks: list %v", n, small)
			}
			check := func(sc string, want []string) {
				t.Helper()
				log = log[:0]
				d.deliver(&notification.Event{Scope: mustScope(sc)}, 0)
				want = slices.DeleteFunc(slices.Clone(want), func(s string) bool { return !added[s] })
				got := slices.Clone(log)
				if i, j := slices.Index(got, "ab"), slices.Index(got, "ab2"); i >= 0 && j >= 0 && i > j {
					t.Errorf("%s: ab2 before ab in %v", sc, got)
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s: delivered to %v, want %v", sc, got, want)
				}
			}
			for _, c := range cases {
				check(c.sc, c.want)
			}
			rmAB()
			rmAB()
			delete(added, "ab")
			check("/a/b/", []string{"root", "a", "ab2"})
		})
	}
}

// TestDispatcherConcurrent: sinks come and go, the dispatcher moving
// between its list and its index, while events are matched (for the race
// detector); every match finds the sink that stays, once.
func TestDispatcherConcurrent(t *testing.T) {
	var d dispatcher
	stays := &testSink{name: "stays", sc: mustScope("/c/")}
	d.add(stays)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var rms []func()
		for i := range 2000 {
			rms = append(rms, d.add(&testSink{sc: mustScope(fmt.Sprintf("/c/%d/", i%(2*dispatchSmall)))}))
			if len(rms) > 2*dispatchSmall {
				rms[0]()
				rms = rms[1:]
			}
		}
	}()
	sc := mustScope("/c/1/")
	for {
		select {
		case <-done:
			return
		default:
		}
		var buf [16]sink
		found := 0
		for _, s := range d.appendMatching(buf[:0], sc) {
			if s == sink(stays) {
				found++
			}
		}
		if found != 1 {
			t.Fatalf("the staying sink matched %d times", found)
		}
	}
}

// TestDispatcherDepths: sinks deeper than the depth counters distinguish
// still match exactly, and none is left after their removal.
func TestDispatcherDepths(t *testing.T) {
	var d dispatcher
	var log []string
	deep := "/" + strings.Repeat("x/", dispatchDepths+4)
	deeper := deep + "y/"
	rm := d.add(&testSink{name: "deep", sc: mustScope(deep), log: &log})
	for _, c := range []struct {
		sc   string
		want bool
	}{{deep, true}, {deeper, true}, {"/" + strings.Repeat("x/", dispatchDepths+3), false}, {"/x/", false}} {
		if got := len(d.appendMatching(nil, mustScope(c.sc))) > 0; got != c.want {
			t.Errorf("wants(%d components) = %v, want %v", components(mustScope(c.sc)), got, c.want)
		}
	}
	rm()
	if m := d.appendMatching(nil, mustScope(deeper)); len(m) != 0 || len(d.by) != 0 || d.atDepth != [dispatchDepths]int{} {
		t.Fatalf("after removal: %d sinks match, %d scopes, depths %v", len(m), len(d.by), d.atDepth)
	}
}

// TestDispatcherChangeFromDeliver: a sink may add and remove sinks while it
// is given an event; the change applies from the next event.
func TestDispatcherChangeFromDeliver(t *testing.T) {
	var d dispatcher
	var log []string
	var rmLate func()
	first := &testSink{name: "first", sc: mustScope("/s/"), log: &log}
	first.on = func() {
		if rmLate == nil {
			rmLate = d.add(&testSink{name: "late", sc: mustScope("/s/"), log: &log})
		} else {
			rmLate()
		}
	}
	d.add(first)
	ev := &notification.Event{Scope: mustScope("/s/t/")}
	for i, want := range [][]string{{"first"}, {"first", "late"}, {"first"}} {
		log = log[:0]
		d.deliver(ev, 0)
		if !slices.Equal(log, want) {
			t.Fatalf("event %d: %v, want %v", i, log, want)
		}
	}
}

// BenchmarkDispatch measures finding and calling an event's sink among n
// sinks on distinct scopes, the events round-robin over the scopes.
func BenchmarkDispatch(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("sinks=%d", n), func(b *testing.B) {
			var d dispatcher
			var log []string
			evs := make([]*notification.Event, n)
			for i := range n {
				sc := mustScope(fmt.Sprintf("/bench/dispatch/%05d/", i))
				d.add(&testSink{sc: sc, log: &log})
				evs[i] = &notification.Event{Scope: sc}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				d.deliver(evs[i], 0)
				if i++; i == n {
					i, log = 0, log[:0]
				}
			}
		})
	}
}

// deliver hands ev to every sink whose scope contains the event's scope,
// as the socket link does.
func (d *dispatcher) deliver(ev *notification.Event, recv int64) {
	var buf [8]sink
	deliverTo(d.appendMatching(buf[:0], ev.Scope), item{ev: ev, recv: recv})
}
