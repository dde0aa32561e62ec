package mesh

import (
	"errors"
	"reflect"
	"sync"
	"testing"
)

// TestCounters checks every count lands on its reason, an undeclared
// reason on ReasonOther, and the snapshot lists every reason.
func TestCounters(t *testing.T) {
	c := NewCounters("wire", Reasons{Dropped: []string{"queue_full", "expired"}, Rejected: []string{"bad_magic"}, Closed: []string{"heartbeat"}})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			c.AddPublished(1)
			c.AddDelivered(2)
			c.AddDropped("queue_full", 3)
			c.AddDropped("no_such_reason", 1)
			c.Reject("bad_magic")
			c.Closed("heartbeat")
			c.AddConnections(1)
			c.AddSubscribers(2)
		})
	}
	wg.Wait()
	if n := c.AddConnections(-1); n != 3 {
		t.Fatalf("AddConnections returned %d", n)
	}
	want := Stats{Protocol: "wire", Published: 4, Delivered: 8, Connections: 3, Subscribers: 8,
		Dropped:  map[string]int64{"queue_full": 12, "expired": 0, ReasonOther: 4},
		Rejected: map[string]int64{"bad_magic": 4, ReasonOther: 0},
		Closed:   map[string]int64{"heartbeat": 4, ReasonOther: 0}}
	if got := c.Stats(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Stats() = %+v\nwant %+v", got, want)
	}
	r := c.Reasons()
	if !reflect.DeepEqual(r.Dropped, []string{"expired", "other", "queue_full"}) || !reflect.DeepEqual(r.Closed, []string{"heartbeat", "other"}) {
		t.Fatalf("Reasons() = %+v", r)
	}
	r.Dropped[0] = "changed"
	if c.Reasons().Dropped[0] != "expired" {
		t.Fatal("Reasons shares its slices")
	}
}

// TestCountersBadNames checks a bad protocol or reason panics with
// ErrBadName.
func TestCountersBadNames(t *testing.T) {
	for _, tc := range []struct {
		proto string
		r     Reasons
	}{{"Bad", Reasons{}}, {"ok", Reasons{Dropped: []string{"queue-full"}}}, {"ok", Reasons{Rejected: []string{""}}}} {
		func() {
			defer func() {
				err, _ := recover().(error)
				if !errors.Is(err, ErrBadName) {
					t.Errorf("NewCounters(%q, %+v) panicked with %v", tc.proto, tc.r, err)
				}
			}()
			NewCounters(tc.proto, tc.r)
		}()
	}
}
