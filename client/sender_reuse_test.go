package client

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// encodedEvent returns an event of size bytes of data on sc, numbered i,
// and its encoding.
func encodedEvent(t *testing.T, sc scope.Scope, i, size int) (*notification.Event, string) {
	t.Helper()
	ev := &notification.Event{Scope: sc, WireSchema: notification.SchemaBytes,
		Data: bytes.Repeat([]byte{byte(i)}, size), ID: notification.EventID{SequenceNumber: uint32(i)}}
	enc, err := notification.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return ev, string(enc)
}

// ungate lets the goroutine of s write, at w's gate now or later (the
// gate is closed, so a call that took it before it was cleared passes
// too), has every later frame taken whole, and waits until s has written
// everything.
func (w *fakeWriter) ungate(t *testing.T, s *sender) {
	t.Helper()
	w.mu.Lock()
	gate := w.gate
	w.try, w.gate = tryTake, nil
	w.mu.Unlock()
	close(gate)
	if err := flushWithin(s, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestSenderReusesLargeBuffers: a large frame's buffer goes back to the
// pool once the frame is written, not before: a frame the socket owes the
// rest of keeps its buffer until the goroutine finished it.
func TestSenderReusesLargeBuffers(t *testing.T) {
	w := &fakeWriter{try: tryPart, gate: make(chan error)}
	s, _ := testSender(t, w)
	sc := mustScope("/large/")
	var want []string
	send := func(i int, at int64) {
		ev, enc := encodedEvent(t, sc, i, 40_000+i%3*30_000)
		want = append(want, enc)
		if err := s.sendEvent(context.Background(), ev, at); err != nil {
			t.Fatal(err)
		}
	}
	// The first frame is begun and owed; the second queues behind it while
	// the goroutine waits to write.
	send(0, 1000)
	send(3, 1001)
	if _, calls := w.written(); len(calls) != 0 {
		t.Fatalf("calls %v before the goroutine wrote, want none", calls)
	}
	w.mu.Lock()
	owed := w.owed != nil
	w.mu.Unlock()
	if !owed {
		t.Fatal("the first frame was not offered")
	}
	w.ungate(t, s)
	// Bursts: a frame after a pause is offered and taken whole, the rest
	// queue behind it.
	made := s.bufs.made.Load()
	at := int64(2000)
	for i := range 60 {
		send(i, at)
		at++
		if i%5 == 0 {
			at += 1000
		}
		if i%10 == 9 {
			if err := flushWithin(s, 10*time.Second); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := flushWithin(s, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.written(); !slices.Equal(got, want) {
		t.Fatalf("%d frames written, want %d, or a frame differs", len(got), len(want))
	}
	if n := s.bufs.made.Load() - made; n > 12 {
		t.Fatalf("%d buffers made for 60 large frames written in batches of at most 10", n)
	}
}

// TestSenderReusesArenas: small frames are encoded into arenas that are
// used again once their frames are written, and not before: a frame the
// socket owes the rest of, and the frames queued behind it, keep their
// arena until the goroutine wrote them.
func TestSenderReusesArenas(t *testing.T) {
	w := &fakeWriter{try: tryPart, gate: make(chan error)}
	s, _ := testSender(t, w)
	sc := mustScope("/arena/reuse/")
	var want []string
	send := func(i int, at int64) {
		ev, enc := encodedEvent(t, sc, i, 150+i%7*20)
		want = append(want, enc)
		if err := s.sendEvent(context.Background(), ev, at); err != nil {
			t.Fatal(err)
		}
	}
	// The first frame is begun and owed; a burst of more than an arena
	// queues behind it while the goroutine waits to write.
	send(0, 1000)
	for i := 1; i < 1000; i++ {
		send(i, 1001)
	}
	w.ungate(t, s)
	// Bursts of about four arenas each, flushed in between.
	s.mu.Lock()
	made := s.arenas
	s.mu.Unlock()
	at := int64(2000)
	for burst := range 20 {
		at += 1000
		for i := range 1000 {
			send(burst*1000+i, at)
		}
		if err := flushWithin(s, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := w.written(); !slices.Equal(got, want) {
		t.Fatalf("%d frames written, want %d, or a frame differs", len(got), len(want))
	}
	s.mu.Lock()
	made = s.arenas - made
	s.mu.Unlock()
	if made > 20 {
		t.Fatalf("%d arenas made for 20 bursts of about four arenas, flushed in between", made)
	}
}
