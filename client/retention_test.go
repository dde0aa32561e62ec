package client

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/scope"
)

// seen is what a handler of a listener WithoutRetention reads from its
// event before it returns, since it may not keep the event.
type seen struct {
	payload any
	seq     uint32
	timed   bool   // receive and deliver times set
	ev      *Event // the event's identity, never read after the handler
}

// borrowEvents adds a handler to l that reports every non-probe event.
func borrowEvents(l *Listener) <-chan seen {
	ch := make(chan seen, 1024)
	l.AddHandler(func(ev *Event) error {
		if ev.Method != probeMethod {
			ch <- seen{payload: ev.Payload, seq: ev.ID.SequenceNumber,
				timed: ev.MetaData.ReceiveTime != 0 && ev.MetaData.DeliverTime != 0, ev: ev}
		}
		return nil
	})
	return ch
}

// TestWithoutRetention: a listener WithoutRetention gets every event whole
// and in order, in events it gives back and gets again; a listener that
// keeps its events on the same scope keeps them intact meanwhile.
func TestWithoutRetention(t *testing.T) {
	for _, inline := range []bool{false, true} {
		name := "queued"
		if inline {
			name = "inline"
		}
		t.Run(name, func(t *testing.T) {
			forEnvs(t, 1, func(t *testing.T, e env) { testWithoutRetention(t, e, inline) })
		})
	}
}

func testWithoutRetention(t *testing.T, e env, inline bool) {
	a, b := e.connect(t, 0), e.connect(t, 0)
	opts := []Option{WithoutRetention(), WithQueue(1024, DropNewest)}
	if inline {
		opts = append(opts, WithInlineDelivery())
	}
	listen := func(sc string, opts ...Option) *Listener {
		l, err := b.NewListener(mustScope(sc), opts...)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	informer := func(sc string) *Informer {
		inf, err := a.NewInformer(mustScope(sc))
		if err != nil {
			t.Fatal(err)
		}
		return inf
	}
	soleSc, sharedSc := "/borrow/"+e.name+"/sole/", "/borrow/"+e.name+"/shared/"
	rd := awaitRouteReader(t, a, b, mustScope(soleSc))
	sole := borrowEvents(listen(soleSc, opts...))
	rd.Close() // the borrowing listener alone receives on soleSc
	rd = awaitRouteReader(t, a, b, mustScope(sharedSc))
	kept := collectEvents(t, listen(sharedSc, WithQueue(1024, DropNewest)))
	shared := borrowEvents(listen(sharedSc, opts...))
	rd.Close()

	const n = 300
	// One event at a time: each is given back before the next arrives.
	soleInf := informer(soleSc)
	events := map[*Event]bool{}
	var first uint32
	for i := range n {
		if _, err := soleInf.Publish(bg(), int64(i)); err != nil {
			t.Fatal(err)
		}
		s := receive(t, sole)
		if i == 0 {
			first = s.seq
		}
		if s.payload != int64(i) || s.seq != first+uint32(i) || !s.timed {
			t.Fatalf("event %d: payload %v, sequence number %d (first %d), times set %v", i, s.payload, s.seq, first, s.timed)
		}
		events[s.ev] = true
	}
	// The pool keeps most of what it is given (under the race detector it
	// drops a quarter at random).
	if len(events) > n/2 {
		t.Fatalf("%d distinct events for %d deliveries: events are not reused", len(events), n)
	}

	sharedInf := informer(sharedSc)
	for i := range n {
		if _, err := sharedInf.Publish(bg(), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if s := receive(t, shared); s.payload != int64(i) || !s.timed {
			t.Fatalf("shared event %d: payload %v, times set %v", i, s.payload, s.timed)
		}
	}
	evs := make([]*Event, n)
	for i := range evs {
		evs[i] = next(t, kept)
	}
	for i, ev := range evs { // read after the borrowing listener gave all back
		if ev.Payload != int64(i) || ev.Scope.String() != sharedSc {
			t.Fatalf("kept event %d: payload %v on %s", i, ev.Payload, ev.Scope)
		}
	}
}

// TestPublishReusesWireEvents: over the socket protocol a publish nothing
// local listens to allocates nothing (its wire event goes back to the
// pool), while events a local listener still holds in its queue stay
// intact.
func TestPublishReusesWireEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("rsbd processes are not started with -short")
	}
	d := clienttest.StartDaemons(t, 1)[0]
	b := dialNode(t, d.URI())
	sc := mustScope("/wire/kept/")
	l, err := b.NewListener(sc, WithQueue(1024, DropNewest))
	if err != nil {
		t.Fatal(err)
	}
	got := collectEvents(t, l) // its handler blocks after 256 events
	inf, err := b.NewInformer(sc)
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.NewInformer(mustScope("/wire/nobody/"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 400
	for i := range n {
		if _, err := inf.Publish(bg(), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	payload := any([]byte("reused"))
	allocs := testing.AllocsPerRun(2000, func() {
		if _, err := other.Publish(bg(), payload); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Fatalf("%v allocations per publish that nothing keeps, want none", allocs)
	}
	for i := range n {
		if ev := next(t, got); ev.Payload != int64(i) || ev.Scope != sc {
			t.Fatalf("local event %d: payload %v on %s", i, ev.Payload, ev.Scope)
		}
	}
}

// TestWithoutRetentionReusesSlabs: the receive slabs of events given back
// are read into again, small and large (a large slab holds one body),
// while data of events a listener keeps, read into the same slabs or
// large ones, stays intact, and so does the data of events still queued.
func TestWithoutRetentionReusesSlabs(t *testing.T) {
	n := clienttest.StartNodes(t, 1)[0]
	a, b := dialNode(t, n.SocketAddr().String()), dialNode(t, n.SocketAddr().String())
	slabs := b.link.(*socketLink).slabs
	// Every tenth event of a stream is large (100 KB): a large slab's.
	pattern := func(tag, i int) []byte {
		if i%10 == 9 {
			return bytes.Repeat([]byte{byte(tag), byte(i)}, 50_000)
		}
		return bytes.Repeat([]byte{byte(tag), byte(i)}, 1500)
	}
	// check returns a handler checking the data of the stream of tag.
	check := func(ch chan error, tag int) Handler {
		i := 0
		return func(ev *Event) error {
			if ev.Method == probeMethod {
				return nil
			}
			if !bytes.Equal(ev.Data, pattern(tag, i)) {
				ch <- fmt.Errorf("event %d of %d: wrong data", i, tag)
			} else {
				ch <- nil
			}
			i++
			return nil
		}
	}
	listen := func(sc scope.Scope, h Handler, opts ...Option) {
		rd := awaitRouteReader(t, a, b, sc)
		l, err := b.NewListener(sc, append(opts, WithQueue(4096, DropNewest))...)
		if err != nil {
			t.Fatal(err)
		}
		l.AddHandler(h)
		rd.Close()
	}
	informer := func(sc scope.Scope) *Informer {
		inf, err := a.NewInformer(sc)
		if err != nil {
			t.Fatal(err)
		}
		return inf
	}
	publish := func(inf *Informer, tag, i int) {
		if _, err := inf.Publish(bg(), pattern(tag, i)); err != nil {
			t.Fatal(err)
		}
	}
	await := func(ch chan error, n int) {
		for range n {
			if err := receive(t, ch); err != nil {
				t.Fatal(err)
			}
		}
	}

	// One event at a time: 300 events of 3 KB and 100 KB fill about 60
	// slabs and 30 large ones; given back, a few are read into again.
	borrowSc := mustScope("/slabs/borrow/")
	borrowed := make(chan error, 4096)
	listen(borrowSc, check(borrowed, 1), WithoutRetention())
	infB := informer(borrowSc)
	before := slabs.made.Load()
	for i := range 300 {
		publish(infB, 1, i)
		await(borrowed, 1)
	}
	if made := slabs.made.Load() - before; made > 8 {
		t.Fatalf("%d slabs made for 300 events given back one at a time", made)
	}

	// Events kept by a listener share slabs with events given back: the
	// kept data must stay as it was.
	keepSc := mustScope("/slabs/keep/")
	var mu sync.Mutex
	var kept []*Event
	keptCh := make(chan error, 4096)
	listen(keepSc, func(ev *Event) error {
		if ev.Method != probeMethod {
			mu.Lock()
			kept = append(kept, ev)
			mu.Unlock()
			keptCh <- nil
		}
		return nil
	})
	infK := informer(keepSc)
	for i := range 300 {
		publish(infK, 2, i)
		publish(infB, 1, 300+i)
	}
	await(borrowed, 300)
	await(keptCh, 300)
	mu.Lock()
	for i, ev := range kept {
		if !bytes.Equal(ev.Data, pattern(2, i)) {
			t.Fatalf("kept event %d: its data changed", i)
		}
	}
	mu.Unlock()

	// Events waiting in a listener's queue hold their slabs: the reader
	// moves on over many slabs meanwhile and must read into none of them.
	heldSc := mustScope("/slabs/held/")
	gate := make(chan struct{})
	held := make(chan error, 4096)
	checkHeld := check(held, 3)
	listen(heldSc, func(ev *Event) error {
		<-gate
		return checkHeld(ev)
	}, WithoutRetention())
	infH := informer(heldSc)
	for i := range 300 {
		publish(infH, 3, i)
		publish(infB, 1, 600+i) // into other slabs
	}
	await(borrowed, 300)
	close(gate)
	await(held, 300)
}
