package streamcall

import (
	"errors"
	"testing"
	"time"
)

// t0 is the tests' clock origin.
var t0 = time.Unix(1_000_000, 0)

// drain returns the sequence numbers of the chunks r has ready.
func drain(r *Receiver) []uint32 {
	var out []uint32
	for {
		c, ok := r.Next()
		if !ok {
			return out
		}
		out = append(out, c.Seq)
	}
}

func TestReceiverInOrder(t *testing.T) {
	r := NewReceiver(t0.Add(time.Minute), time.Second)
	for i := range uint32(1000) {
		r.Push(Chunk{Seq: i, Done: i == 999}, t0)
	}
	got := drain(r)
	if len(got) != 1000 || !r.Done() || r.Err() != nil {
		t.Fatalf("got %d chunks, done %v, err %v", len(got), r.Done(), r.Err())
	}
	for i, s := range got {
		if s != uint32(i) {
			t.Fatalf("chunk %d has seq %d", i, s)
		}
	}
	if _, ok := r.Wake(); ok {
		t.Error("a finished receiver still wants the clock")
	}
}

func TestReceiverReordersWithinGap(t *testing.T) {
	r := NewReceiver(time.Time{}, time.Second)
	r.Push(Chunk{Seq: 0}, t0)
	r.Push(Chunk{Seq: 2}, t0)
	r.Push(Chunk{Seq: 3, Done: true}, t0)
	if got := drain(r); len(got) != 1 {
		t.Fatalf("before the gap fills: %v", got)
	}
	if at, ok := r.Wake(); !ok || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("wake %v %v, want the gap's timeout", at, ok)
	}
	r.Push(Chunk{Seq: 1}, t0.Add(500*time.Millisecond))
	if got := drain(r); len(got) != 3 || got[2] != 3 || !r.Done() || r.Err() != nil {
		t.Fatalf("after the gap filled: %v done %v err %v", got, r.Done(), r.Err())
	}
}

func TestReceiverErrors(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, r *Receiver)
		want error
	}{
		{"gap times out", func(t *testing.T, r *Receiver) {
			r.Push(Chunk{Seq: 0}, t0)
			r.Push(Chunk{Seq: 2}, t0)
			r.Tick(t0.Add(999 * time.Millisecond))
			if r.Err() != nil {
				t.Fatal("failed before the gap timeout")
			}
			r.Tick(t0.Add(time.Second))
		}, ErrLost},
		{"too many held", func(t *testing.T, r *Receiver) {
			for i := range uint32(MaxHeld + 1) {
				r.Push(Chunk{Seq: i + 1}, t0)
			}
		}, ErrLost},
		{"duplicate", func(t *testing.T, r *Receiver) {
			r.Push(Chunk{Seq: 0}, t0)
			r.Push(Chunk{Seq: 0}, t0)
		}, ErrOutOfOrder},
		{"duplicate held", func(t *testing.T, r *Receiver) {
			r.Push(Chunk{Seq: 3}, t0)
			r.Push(Chunk{Seq: 3}, t0)
		}, ErrOutOfOrder},
		{"no first chunk", func(t *testing.T, r *Receiver) {
			r.ExpectFirstBy(t0.Add(time.Second))
			if at, ok := r.Wake(); !ok || !at.Equal(t0.Add(time.Second)) {
				t.Fatalf("wake %v %v, want the first chunk's deadline", at, ok)
			}
			r.Tick(t0.Add(999 * time.Millisecond))
			if r.Err() != nil {
				t.Fatal("failed before the first chunk's deadline")
			}
			r.Tick(t0.Add(time.Second))
		}, ErrNoAnswer},
		{"first chunk in time", func(t *testing.T, r *Receiver) {
			r.ExpectFirstBy(t0.Add(time.Second))
			r.Push(Chunk{Seq: 0}, t0)
			r.Tick(t0.Add(2 * time.Second))
			if r.Err() != nil {
				t.Fatalf("failed after the first chunk: %v", r.Err())
			}
			r.Tick(t0.Add(time.Minute))
		}, ErrDeadline},
		{"deadline", func(t *testing.T, r *Receiver) {
			r.Push(Chunk{Seq: 0}, t0)
			r.Tick(t0.Add(time.Minute))
		}, ErrDeadline},
		{"deadline while a gap is open", func(t *testing.T, r *Receiver) {
			r.Push(Chunk{Seq: 1}, t0.Add(59500*time.Millisecond))
			r.Tick(t0.Add(time.Minute))
		}, ErrDeadline},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReceiver(t0.Add(time.Minute), time.Second)
			tc.run(t, r)
			if !errors.Is(r.Err(), tc.want) {
				t.Fatalf("err %v, want %v", r.Err(), tc.want)
			}
			if _, ok := r.Wake(); ok {
				t.Error("a failed receiver still wants the clock")
			}
		})
	}
}

// TestReceiverKeepsChunksBeforeFailure: chunks in order before a failure
// are still handed over, then the error.
func TestReceiverKeepsChunksBeforeFailure(t *testing.T) {
	r := NewReceiver(time.Time{}, time.Second)
	r.Push(Chunk{Seq: 0}, t0)
	r.Push(Chunk{Seq: 1}, t0)
	r.Push(Chunk{Seq: 3}, t0)
	r.Tick(t0.Add(2 * time.Second))
	if got := drain(r); len(got) != 2 {
		t.Fatalf("ready %v, want 0 and 1", got)
	}
	if !errors.Is(r.Err(), ErrLost) {
		t.Fatalf("err %v", r.Err())
	}
	r.Push(Chunk{Seq: 2}, t0.Add(3*time.Second))
	if got := drain(r); len(got) != 0 {
		t.Fatalf("a failed receiver took %v", got)
	}
}

// TestReceiverNewGapRestartsClock: once a gap fills, the next gap's clock
// starts when it filled, not when the first gap opened.
func TestReceiverNewGapRestartsClock(t *testing.T) {
	r := NewReceiver(time.Time{}, time.Second)
	r.Push(Chunk{Seq: 1}, t0)
	r.Push(Chunk{Seq: 3}, t0)
	r.Push(Chunk{Seq: 0}, t0.Add(900*time.Millisecond))
	r.Tick(t0.Add(1500 * time.Millisecond))
	if r.Err() != nil {
		t.Fatalf("second gap failed early: %v", r.Err())
	}
	r.Tick(t0.Add(1900 * time.Millisecond))
	if !errors.Is(r.Err(), ErrLost) {
		t.Fatalf("err %v, want ErrLost", r.Err())
	}
}
