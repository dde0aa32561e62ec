package spinpay

import "testing"

// TestGatePollsWhileHitsPay: a new gate polls; misses stop it, after which
// only one opportunity in probeEvery polls; hits on the probes bring
// polling back.
func TestGatePollsWhileHitsPay(t *testing.T) {
	var g Gate
	if !g.Allow() || !g.Polling() {
		t.Fatal("a new gate does not poll")
	}
	misses := 0
	for g.Polling() {
		g.Record(false)
		if misses++; misses > 100 {
			t.Fatal("misses never stop polling")
		}
	}
	if misses < 3 {
		t.Fatalf("polling stopped after %d misses: one stray miss must not stop it", misses)
	}
	allowed := 0
	for range 10 * probeEvery {
		if g.Allow() {
			allowed++
		}
	}
	if allowed != 10 {
		t.Fatalf("a stopped gate allowed %d of %d polls, want %d probes", allowed, 10*probeEvery, 10)
	}
	if g.Skips() != uint64(10*probeEvery-10) {
		t.Fatalf("skips = %d, want %d", g.Skips(), 10*probeEvery-10)
	}
	hits := 0
	for !g.Polling() {
		g.Record(true)
		if hits++; hits > 100 {
			t.Fatal("hits never bring polling back")
		}
	}
	for range 50 {
		g.Record(true)
	}
	if g.miss.Load() != 0 {
		t.Fatalf("a run of hits leaves miss score %d, want 0", g.miss.Load())
	}
}

// TestGateMixedOutcomes: a hit rate above one half keeps polling, below it
// stops.
func TestGateMixedOutcomes(t *testing.T) {
	for _, c := range []struct {
		hitsOf4 int
		polling bool
	}{{4, true}, {3, true}, {1, false}, {0, false}} {
		var g Gate
		for i := range 400 {
			g.Record(i%4 < c.hitsOf4)
		}
		if g.Polling() != c.polling {
			t.Errorf("%d hits in 4: polling %v, want %v", c.hitsOf4, g.Polling(), c.polling)
		}
	}
}

func TestGateConcurrent(t *testing.T) {
	var g Gate
	done := make(chan struct{})
	for w := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 1000 {
				if g.Allow() {
					g.Record((i+w)%2 == 0)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	if m := g.miss.Load(); m < 0 || m > scoreOne {
		t.Fatalf("score out of range: miss %d", m)
	}
}
