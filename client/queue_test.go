package client

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
)

func seqItem(n uint32) item {
	return item{ev: &notification.Event{ID: notification.EventID{SequenceNumber: n}}}
}

func TestQueue(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy DropPolicy
		want   []uint32
	}{{"newest", DropNewest, []uint32{0, 1, 2}}, {"oldest", DropOldest, []uint32{4, 5, 6}}} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(3, DefaultQueueBytes, tc.policy)
			for i := range uint32(7) {
				q.push(seqItem(i))
			}
			if q.len() != 3 || q.dropped.Load() != 4 || q.pushed.Load()+q.dropped.Load() < 7 {
				t.Fatalf("len %d dropped %d pushed %d", q.len(), q.dropped.Load(), q.pushed.Load())
			}
			for _, w := range tc.want {
				it, err := q.pop(bg(), nil, nil)
				if err != nil || it.ev.ID.SequenceNumber != w {
					t.Fatalf("pop = %v, %v; want %d", it.ev, err, w)
				}
			}
			ctx, cancel := context.WithTimeout(bg(), 10*time.Millisecond)
			defer cancel()
			if _, err := q.pop(ctx, nil, nil); !errors.Is(err, ErrTimeout) {
				t.Fatalf("pop on empty queue: %v", err)
			}
		})
	}
}

func TestQueueCloseAndDead(t *testing.T) {
	q := newQueue(4, DefaultQueueBytes, DropNewest)
	q.push(seqItem(1))
	dead := make(chan struct{})
	cause := func() error { return ErrDisconnected }
	close(dead)
	if it, err := q.pop(bg(), dead, cause); err != nil || it.ev.ID.SequenceNumber != 1 {
		t.Fatalf("queued item not delivered before the disconnect: %v", err)
	}
	if _, err := q.pop(bg(), dead, cause); !errors.Is(err, ErrDisconnected) {
		t.Fatalf("pop after disconnect: %v", err)
	}
	q.close()
	q.close()
	if q.push(seqItem(2)) {
		t.Fatal("push after close accepted")
	}
	if _, err := q.pop(bg(), nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("pop after close: %v", err)
	}
}

// TestQueueConcurrent has several consumers drain several producers; every
// accepted item is popped exactly once.
func TestQueueConcurrent(t *testing.T) {
	q := newQueue(64, DefaultQueueBytes, DropNewest)
	const producers, each = 4, 2000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				for !q.push(seqItem(uint32(p*each + i))) {
					q.dropped.Add(^uint64(0)) // retry instead of losing it
				}
			}
		})
	}
	seen := make(chan uint32, producers*each)
	var cons sync.WaitGroup
	ctx, cancel := context.WithCancel(bg())
	for range 3 {
		cons.Go(func() {
			for {
				it, err := q.pop(ctx, nil, nil)
				if err != nil {
					return
				}
				seen <- it.ev.ID.SequenceNumber
			}
		})
	}
	wg.Wait()
	testutil.WaitFor(t, 10*time.Second, "drained", func() bool { return len(seen) == producers*each })
	cancel()
	cons.Wait()
	got := make(map[uint32]bool)
	for range producers * each {
		n := <-seen
		if got[n] {
			t.Fatalf("item %d popped twice", n)
		}
		got[n] = true
	}
}

// TestQueueGrows: a queue starts with room for queueInitial events and
// doubles its ring as events pile up, never past its bound, keeping their
// order across the ring's wrap; the bound then drops as the policy says.
func TestQueueGrows(t *testing.T) {
	const bound = 100
	q := newQueue(bound, DefaultQueueBytes, DropNewest)
	if len(q.buf) != queueInitial {
		t.Fatalf("a new queue has room for %d events, want %d", len(q.buf), queueInitial)
	}
	next, want := uint32(0), uint32(0)
	// Wrap the small ring first: push 10, pop 5, then push past its room.
	for range 10 {
		q.push(seqItem(next))
		next++
	}
	for range 5 {
		if it, ok := q.tryPop(); !ok || it.ev.ID.SequenceNumber != want {
			t.Fatalf("pop %d: %v", want, it.ev)
		}
		want++
	}
	for next < 5+bound+20 {
		q.push(seqItem(next))
		next++
	}
	if len(q.buf) != bound || q.len() != bound || q.dropped.Load() != 20 {
		t.Fatalf("ring %d, %d queued, %d dropped; want %d, %d, 20", len(q.buf), q.len(), q.dropped.Load(), bound, bound)
	}
	for range bound {
		if it, ok := q.tryPop(); !ok || it.ev.ID.SequenceNumber != want {
			t.Fatalf("pop %d: %v, %v", want, it.ev, ok)
		}
		want++
	}
}

// TestQueuePopInto: consumers taking batches get every event once, each
// in order, however pushes and takes interleave (a push signals only an
// empty queue, so a lost wake-up would hang a consumer).
func TestQueuePopInto(t *testing.T) {
	const total = 20000
	q := newQueue(total, DefaultQueueBytes, DropNewest)
	ctx, cancel := context.WithTimeout(bg(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	seen := make([][]uint32, 2)
	errs := make(chan error, 2)
	for c := range seen {
		wg.Go(func() {
			dst := make([]item, 7+c*50)
			for {
				k, err := q.popInto(ctx, nil, nil, dst)
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						errs <- err
					}
					return
				}
				for _, it := range dst[:k] {
					seen[c] = append(seen[c], it.ev.ID.SequenceNumber)
				}
			}
		})
	}
	for i := range uint32(total) {
		q.push(seqItem(i))
	}
	testutil.WaitFor(t, 30*time.Second, "the consumers to take everything", func() bool { return q.len() == 0 })
	q.close()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all := make([]bool, total)
	for c, s := range seen {
		for i, n := range s {
			if i > 0 && n <= s[i-1] {
				t.Fatalf("consumer %d: %d after %d", c, n, s[i-1])
			}
			all[n] = true
		}
	}
	if len(seen[0])+len(seen[1]) != total {
		t.Fatalf("%d + %d events taken, want %d", len(seen[0]), len(seen[1]), total)
	}
	for i, ok := range all {
		if !ok {
			t.Fatalf("event %d not taken", i)
		}
	}
}

// TestQueuePushMany: a batch is queued in order under the policies'
// bounds, its drops counted as single pushes count them, and a waiting
// consumer is woken.
func TestQueuePushMany(t *testing.T) {
	batch := func(from, n uint32) []item {
		var items []item
		for i := range n {
			items = append(items, seqItem(from+i))
		}
		return items
	}
	for _, tc := range []struct {
		name    string
		policy  DropPolicy
		want    []uint32
		dropped int
	}{{"newest", DropNewest, []uint32{0, 1, 2, 3}, 3}, {"oldest", DropOldest, []uint32{3, 4, 5, 6}, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(4, DefaultQueueBytes, tc.policy)
			woken := make(chan item, 1)
			go func() {
				it, err := q.pop(bg(), nil, nil)
				if err == nil {
					woken <- it
				}
			}()
			if d := q.pushMany(batch(0, 1)); d != 0 {
				t.Fatalf("%d dropped of one", d)
			}
			if it := receive(t, woken); it.ev.ID.SequenceNumber != 0 {
				t.Fatalf("woken with %d", it.ev.ID.SequenceNumber)
			}
			if d := q.pushMany(batch(0, 7)); d != tc.dropped {
				t.Fatalf("%d dropped, want %d", d, tc.dropped)
			}
			if q.dropped.Load() != uint64(tc.dropped) || q.len() != 4 {
				t.Fatalf("dropped %d, len %d", q.dropped.Load(), q.len())
			}
			for _, w := range tc.want {
				if it, ok := q.tryPop(); !ok || it.ev.ID.SequenceNumber != w {
					t.Fatalf("got %v %v, want %d", it.ev, ok, w)
				}
			}
		})
	}
}

// TestQueueBytes: the byte bound drops by the policy as the size bound
// does, counted apart; an event heavier than the bound alone is queued
// into an empty queue; popping gives the weight back.
func TestQueueBytes(t *testing.T) {
	sized := func(n uint32, size int) item {
		it := seqItem(n)
		it.ev.Data = make([]byte, size)
		return it
	}
	w := int64(1000 + queueEventOverhead)
	for _, tc := range []struct {
		name   string
		policy DropPolicy
		many   bool
		want   []uint32
	}{
		{"newest", DropNewest, false, []uint32{0, 1, 2}}, {"oldest", DropOldest, false, []uint32{2, 3, 4}},
		{"newest/many", DropNewest, true, []uint32{0, 1, 2}}, {"oldest/many", DropOldest, true, []uint32{2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(100, 3*w+w/2, tc.policy)
			var items []item
			for i := range uint32(5) {
				items = append(items, sized(i, 1000))
			}
			if tc.many {
				q.pushMany(items)
			} else {
				for _, it := range items {
					q.push(it)
				}
			}
			if q.dropped.Load() != 2 || q.droppedBytes.Load() != 2 || q.weight() != 3*w {
				t.Fatalf("dropped %d (%d for bytes), %d bytes queued; want 2, 2, %d",
					q.dropped.Load(), q.droppedBytes.Load(), q.weight(), 3*w)
			}
			for _, n := range tc.want {
				if it, ok := q.tryPop(); !ok || it.ev.ID.SequenceNumber != n {
					t.Fatalf("popped %v %v, want %d", it.ev, ok, n)
				}
			}
			if q.weight() != 0 {
				t.Fatalf("%d bytes left in an empty queue", q.weight())
			}
			// One event heavier than the whole bound still gets through
			// an empty queue; the next is dropped (newest) or displaces
			// it (oldest).
			if !q.push(sized(10, 10000)) {
				t.Fatal("heavy event refused by an empty queue")
			}
			queued := q.push(sized(11, 10))
			if queued != (tc.policy == DropOldest) || q.len() != 1 || q.droppedBytes.Load() != 3 {
				t.Fatalf("push after the heavy event: queued %v, len %d, %d dropped for bytes", queued, q.len(), q.droppedBytes.Load())
			}
		})
	}
}
