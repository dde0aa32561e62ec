package node

import "testing"

func TestRecentEventsBounded(t *testing.T) {
	var r recentEvents
	k := func(i int) eventKey { return eventKey{sender: [16]byte{byte(i >> 8), byte(i)}, seq: uint32(i)} }
	for i := 0; i < recentEventsSize+100; i++ {
		if r.seen(k(i)) {
			t.Fatalf("event %d reported seen on first sight", i)
		}
	}
	if len(r.set) != recentEventsSize {
		t.Fatalf("set holds %d ids, bound %d", len(r.set), recentEventsSize)
	}
	if !r.seen(k(recentEventsSize + 50)) {
		t.Fatal("recent id not remembered")
	}
	if r.seen(k(10)) {
		t.Fatal("id older than the ring remembered")
	}
}
