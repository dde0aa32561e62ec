package engine

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket"
)

// TestDeliveryQueueOrder drives the delivery queue as the engine does:
// producers number deliveries under one lock (the engine lock), claim the
// queue or push to it, and a delivery goroutine drains what they push. Every
// delivery must run exactly once, in number order, one goroutine at a time.
func TestDeliveryQueueOrder(t *testing.T) {
	const producers, rounds = 4, 2000
	q := newQueue()
	var emu sync.Mutex
	next := 0
	var got []int
	var running atomic.Int32
	deliver := func(ds []Delivery) {
		if running.Add(1) != 1 {
			t.Error("two goroutines deliver at once")
		}
		for _, d := range ds {
			got = append(got, d.Size)
		}
		running.Add(-1)
	}
	stop := make(chan struct{})
	consumer := make(chan struct{})
	go func() {
		defer close(consumer)
		for {
			select {
			case <-stop:
				return
			case <-q.wake:
			}
			for c := q.Take(); c != nil; c = q.Take() {
				for c != nil {
					deliver(c.Deliveries)
					c = c.Recycle()
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				emu.Lock()
				ds := make([]Delivery, 1+r%3)
				for i := range ds {
					ds[i].Size = next
					next++
				}
				own := r%2 == 0 && q.claim()
				if !own {
					q.push(ds)
				}
				emu.Unlock()
				if own {
					deliver(ds)
					q.handOff()
				}
			}
		}()
	}
	wg.Wait()
	testutil.WaitFor(t, 10*time.Second, "every delivery", func() bool {
		emu.Lock()
		defer emu.Unlock()
		q.mu.Lock()
		defer q.mu.Unlock()
		return !q.active && len(got) == next
	})
	close(stop)
	<-consumer
	for i, v := range got {
		if v != i {
			t.Fatalf("delivery %d ran as number %d", v, i)
		}
	}
}

// TestDeliveryQueueChunks pushes runs that fill, straddle and overflow
// the queue's chunks: take must return every delivery once, in order, with
// the byte count reset, and a chunk run and recycled must pin nothing.
func TestDeliveryQueueChunks(t *testing.T) {
	q := newQueue()
	next := 0
	for _, n := range []int{1, deliveryChunkLen - 1, 1, 1, 3*deliveryChunkLen + 5, deliveryChunkLen} {
		ds := make([]Delivery, n)
		for i := range ds {
			ds[i] = Delivery{Size: next, Body: []byte{1}}
			next++
		}
		q.push(ds)
	}
	if want := int64(next*(next-1)/2 + next*rsbsocket.FrameOverhead); q.queued.Load() != want {
		t.Fatalf("queued %d bytes, want %d", q.queued.Load(), want)
	}
	if q.claim() {
		t.Fatal("claimed a queue that holds deliveries")
	}
	c := q.Take()
	if q.queued.Load() != 0 || q.head != nil || q.tail != nil {
		t.Fatal("take left deliveries or bytes behind")
	}
	got := 0
	for c != nil {
		if len(c.Deliveries) == 0 || len(c.Deliveries) > deliveryChunkLen {
			t.Fatalf("a chunk holds %d deliveries", len(c.Deliveries))
		}
		for _, d := range c.Deliveries {
			if d.Size != got {
				t.Fatalf("delivery %d came as number %d", d.Size, got)
			}
			got++
		}
		ds := c.Deliveries[:cap(c.Deliveries)]
		c = c.Recycle()
		for i := range ds {
			if ds[i].Body != nil {
				t.Fatal("a recycled chunk still holds a body")
			}
		}
	}
	if got != next {
		t.Fatalf("took %d deliveries, pushed %d", got, next)
	}
	if q.Take() != nil || q.busy.Load() {
		t.Fatal("an empty queue was not given up")
	}
}
