package sinks

import "testing"

func TestRecentEventsBounded(t *testing.T) {
	var r RecentEvents
	k := func(i int) EventKey { return EventKey{Sender: [16]byte{byte(i >> 8), byte(i)}, Seq: uint32(i)} }
	for i := 0; i < RecentEventsSize+100; i++ {
		if r.Seen(k(i)) {
			t.Fatalf("event %d reported seen on first sight", i)
		}
	}
	if len(r.set) != RecentEventsSize {
		t.Fatalf("set holds %d ids, bound %d", len(r.set), RecentEventsSize)
	}
	if !r.Seen(k(RecentEventsSize + 50)) {
		t.Fatal("recent id not remembered")
	}
	if r.Seen(k(10)) {
		t.Fatal("id older than the ring remembered")
	}
}
