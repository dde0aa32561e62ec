package engine

import (
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/scope"
)

func reqOfSize(n int) Request { return Request{Size: n} }

// TestPubQueueBoundAndRoom: a full queue refuses a request and hands out a
// channel that the next take closes; take returns the requests in order
// and the queue then takes more.
func TestPubQueueBoundAndRoom(t *testing.T) {
	q := newPubQueue(3, 1<<20)
	for i := range 3 {
		if ok, _ := q.push(reqOfSize(i)); !ok {
			t.Fatalf("push %d refused below the limit", i)
		}
	}
	ok, room := q.push(reqOfSize(3))
	if ok || room == nil {
		t.Fatal("a full queue took a request")
	}
	select {
	case <-room:
		t.Fatal("room before a take")
	default:
	}
	got := q.take(nil)
	if len(got) != 3 || got[0].Size != 0 || got[2].Size != 2 {
		t.Fatalf("took %v", got)
	}
	select {
	case <-room:
	default:
		t.Fatal("take did not make room for the waiter")
	}
	if ok, _ := q.push(reqOfSize(3)); !ok || q.len() != 1 {
		t.Fatal("no room after a take")
	}
}

// TestPubQueueByteBound: the queue is full once the next event's bytes
// would pass its byte bound, below its count; an empty queue takes any one
// event, however large, so that no event is refused for good.
func TestPubQueueByteBound(t *testing.T) {
	q := newPubQueue(10, 100)
	if ok, _ := q.push(reqOfSize(60)); !ok {
		t.Fatal("an empty queue refused 60 bytes")
	}
	if ok, _ := q.push(reqOfSize(40)); !ok {
		t.Fatal("the queue refused bytes up to its bound")
	}
	ok, room := q.push(reqOfSize(1))
	if ok || room == nil {
		t.Fatal("the queue took bytes past its bound")
	}
	if got := q.take(nil); len(got) != 2 {
		t.Fatalf("took %d requests", len(got))
	}
	select {
	case <-room:
	default:
		t.Fatal("take did not make room")
	}
	if ok, _ := q.push(reqOfSize(500)); !ok {
		t.Fatal("an empty queue refused an event larger than its bound")
	}
	if ok, _ := q.push(reqOfSize(1)); ok {
		t.Fatal("the queue took more behind an event past its bound")
	}
}

// TestPubQueueSignalsOnFirst: only a push into an empty queue readies the
// engine, and a take hands the caller's spare memory to the queue.
func TestPubQueueSignalsOnFirst(t *testing.T) {
	q := newPubQueue(8, 1<<20)
	q.push(reqOfSize(1))
	q.push(reqOfSize(2))
	select {
	case <-q.ready:
	default:
		t.Fatal("no signal for the first request")
	}
	select {
	case <-q.ready:
		t.Fatal("a second signal for a queue that was not empty")
	default:
	}
	spare := make([]Request, 0, 16)
	if got := q.take(spare); len(got) != 2 {
		t.Fatalf("took %d", len(got))
	}
	q.push(reqOfSize(3))
	if cap(q.items) != 16 {
		t.Fatalf("the queue did not reuse the spare (cap %d)", cap(q.items))
	}
	select {
	case <-q.ready:
	default:
		t.Fatal("no signal after the queue emptied")
	}
}

// TestPubQueueConcurrent: publishers pushing past the bound (waiting for
// room) against a consumer taking batches lose nothing and keep each
// publisher's order.
func TestPubQueueConcurrent(t *testing.T) {
	const pubs, each = 4, 5000
	q := newPubQueue(16, 1<<20)
	var wg sync.WaitGroup
	for p := range pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := Request{Size: i, Scope: scope.MustParse("/p/" + string(rune('a'+p)) + "/")}
				for {
					ok, room := q.push(r)
					if ok {
						break
					}
					<-room
				}
			}
		}()
	}
	next := map[string]int{}
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
	var batch []Request
	for n := 0; n < pubs*each; {
		select {
		case <-q.ready: // every push into an empty queue signals: none is missed
		case <-timeout.C:
			t.Fatalf("received %d of %d", n, pubs*each)
		}
		batch = q.take(batch[:0])
		for _, r := range batch {
			k := r.Scope.String()
			if r.Size != next[k] {
				t.Fatalf("%s: request %d after %d", k, r.Size, next[k]-1)
			}
			next[k]++
			n++
		}
		clear(batch)
	}
	wg.Wait()
	if q.len() != 0 {
		t.Fatalf("%d requests left", q.len())
	}
}
