package client

import (
	"fmt"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
)

// TestEventStash: the stash keeps at most eventStashMax events, hands
// them out a batch at a time, and empties itself when nobody takes.
func TestEventStash(t *testing.T) {
	s := newEventStash()
	s.trim.idle = 200 * time.Millisecond
	evs := make([]*Event, eventStashMax+10)
	for i := range evs {
		evs[i] = &Event{home: s}
	}
	s.put(evs)
	if len(s.evs) != eventStashMax {
		t.Fatalf("the stash keeps %d events, want %d", len(s.evs), eventStashMax)
	}
	got := s.take(make([]*Event, 0, eventBatch))
	if len(got) != eventBatch || len(s.evs) != eventStashMax-eventBatch {
		t.Fatalf("took %d, %d left", len(got), len(s.evs))
	}
	r := readerEvents{stash: s}
	for range eventStashMax - eventBatch {
		if ev := r.get(); ev.home != s {
			t.Fatal("an event without its home")
		}
	}
	if s.misses.Load() != 0 {
		t.Fatalf("%d events missed while the stash had some", s.misses.Load())
	}
	if ev := r.get(); ev.home != s || s.misses.Load() != 1 {
		t.Fatalf("an empty stash: %d misses", s.misses.Load())
	}
	s.put(evs[:5])
	testutil.WaitFor(t, 10*time.Second, "the idle stash to empty", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.evs) == 0
	})
}

// TestListenerGivesEventsBack: a socket link's reader decodes into the
// events its listener WithoutRetention gave back, not into new ones, and
// every event arrives whole and in order.
func TestListenerGivesEventsBack(t *testing.T) {
	n := clienttest.StartNodes(t, 1)[0]
	a, b := dialNode(t, n.SocketAddr().String()), dialNode(t, n.SocketAddr().String())
	stash := b.link.(*socketLink).events
	sc := mustScope("/stash/")
	rd := awaitRouteReader(t, a, b, sc)
	l, err := b.NewListener(sc, WithQueue(4096, DropNewest), WithoutRetention())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 4096)
	next := 0
	l.AddHandler(func(ev *Event) error {
		if ev.Method == probeMethod {
			return nil
		}
		if want := fmt.Sprintf("event %d", next); string(ev.Data) != want {
			got <- fmt.Errorf("got %q, want %q", ev.Data, want)
		} else {
			got <- nil
		}
		next++
		return nil
	})
	rd.Close()
	inf, err := a.NewInformer(sc)
	if err != nil {
		t.Fatal(err)
	}
	misses := stash.misses.Load()
	const rounds, per = 50, 100
	for r := range rounds {
		for i := range per {
			if _, err := inf.Publish(bg(), []byte(fmt.Sprintf("event %d", r*per+i))); err != nil {
				t.Fatal(err)
			}
		}
		for range per {
			if err := receive(t, got); err != nil {
				t.Fatal(err)
			}
		}
	}
	if m := stash.misses.Load() - misses; m > 4*per {
		t.Fatalf("%d events not from the stash for %d rounds of %d events given back", m, rounds, per)
	}
}
