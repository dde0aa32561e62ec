package client

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
)

// quickPair connects two Buses to one in-process node over the socket
// protocol and makes sure events on sc published on the first reach the
// second. The caller closes route once its participants on sc exist: its
// interest covers theirs until the server has learnt them.
func quickPair(t *testing.T, sc string) (pub, sub *Bus, route *Reader) {
	t.Helper()
	addr := clienttest.StartNodes(t, 1)[0].SocketAddr().String()
	pub, sub = dialNode(t, addr), dialNode(t, addr)
	return pub, sub, awaitRouteReader(t, pub, sub, mustScope(sc))
}

// TestQuickDelivery: events that reach an idle listener one at a time are
// delivered by the connection's reader itself, in order and once each.
func TestQuickDelivery(t *testing.T) {
	const sc, n = "/quick/one/", 200
	pub, sub, route := quickPair(t, sc)
	l, err := sub.NewListener(mustScope(sc))
	if err != nil {
		t.Fatal(err)
	}
	route.Close()
	got := collectEvents(t, l)
	inf, _ := pub.NewInformer(mustScope(sc))
	before := sub.Stats().QuickDeliveries
	for i := range int64(n) {
		if _, err := inf.Publish(bg(), i); err != nil {
			t.Fatal(err)
		}
		// The next one only once this one was handled: the listener is
		// idle whenever an event arrives.
		if ev := next(t, got); ev.Payload != i {
			t.Fatalf("event %d: got %v", i, ev.Payload)
		}
	}
	st := sub.Stats()
	if quick := st.QuickDeliveries - before; quick < n/2 {
		t.Fatalf("%d of %d events delivered quickly", quick, n)
	}
	if ls := l.Stats(); ls.Queued < n || ls.Dropped != 0 {
		t.Fatalf("listener stats %+v", ls)
	}
}

// TestQuickHandOn: a handler that the reader runs itself and that waits
// for an event only the reader can deliver (here, to a second listener;
// as a RemoteServer call waits for its reply) does not stall the
// connection: the reading is handed on, and the first handler returns.
func TestQuickHandOn(t *testing.T) {
	const sc = "/quick/handon/"
	pub, sub, route := quickPair(t, sc)
	waitSc, wakeSc := mustScope(sc+"wait/"), mustScope(sc+"wake/")
	wake := make(chan struct{})
	waiter, err := sub.NewListener(waitSc)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	waiter.AddHandler(func(*Event) error {
		select {
		case <-wake:
		case <-time.After(20 * time.Second):
			t.Error("the waking event never came: the reading stalled in a handler")
		}
		close(done)
		return nil
	})
	waker, err := sub.NewListener(wakeSc)
	if err != nil {
		t.Fatal(err)
	}
	waker.AddHandler(func(*Event) error { close(wake); return nil })
	route.Close()
	w1, _ := pub.NewInformer(waitSc)
	w2, _ := pub.NewInformer(wakeSc)
	if _, err := w1.Publish(bg(), "wait"); err != nil {
		t.Fatal(err)
	}
	// Once the reader runs the waiting handler, the waking event follows.
	testutil.WaitFor(t, 10*time.Second, "the waiting handler to run", func() bool { return waiter.Stats().Handled > 0 })
	if _, err := w2.Publish(bg(), "wake"); err != nil {
		t.Fatal(err)
	}
	receive(t, done)
	if st := sub.Stats(); st.QuickHandOns == 0 || st.QuickDeliveries == 0 {
		t.Fatalf("bus stats %+v: want a quick delivery handed on", st)
	}
}

// TestQuickOrder: with handlers of varying length (some longer than the
// reader waits) and bursts that queue, every listener still sees its
// events once each, in order, one at a time.
func TestQuickOrder(t *testing.T) {
	const sc, n, listeners = "/quick/order/", 3000, 3
	pub, sub, route := quickPair(t, sc)
	type seen struct {
		next    atomic.Int64
		running atomic.Int32
		bad     atomic.Int64
	}
	var all [listeners]seen
	var ls [listeners]*Listener
	done := make(chan struct{}, listeners)
	var infs [listeners]*Informer
	for k := range listeners {
		s := mustScope(sc + string(rune('a'+k)) + "/")
		l, err := sub.NewListener(s, WithQueue(n, DropNewest))
		if err != nil {
			t.Fatal(err)
		}
		st := &all[k]
		ls[k] = l
		l.AddHandler(func(ev *Event) error {
			if ev.Method == probeMethod {
				return nil
			}
			if st.running.Add(1) != 1 {
				st.bad.Add(1) // two handler calls at once
			}
			i := ev.Payload.(int64)
			if i != st.next.Load() {
				st.bad.Add(1)
			}
			st.next.Store(i + 1)
			switch {
			case i%50 == 1: // the first after a pause, delivered quickly
				spin(2 * time.Millisecond) // longer than the reader waits, and than its timer's lateness
			case i%97 == 0:
				spin(2 * QuickBudget)
			}
			st.running.Add(-1)
			if i == n-1 {
				done <- struct{}{}
			}
			return nil
		})
		infs[k], _ = pub.NewInformer(s)
	}
	route.Close()
	caughtUp := func(i int64, ks ...int) {
		t.Helper()
		defer func() {
			if t.Failed() {
				for k := range all {
					t.Logf("listener %d: next %d, running %d, stats %+v, queue %d, skip %d", k, all[k].next.Load(), all[k].running.Load(), ls[k].Stats(), ls[k].r.q.len(), ls[k].turn.skip.Load())
				}
				t.Logf("bus %+v", sub.Stats())
			}
		}()
		testutil.WaitFor(t, 10*time.Second, "the listeners to catch up", func() bool {
			for _, k := range ks {
				if all[k].next.Load() <= i {
					return false
				}
			}
			return true
		})
	}
	for i := range int64(n) {
		if i%50 == 1 {
			// After a pause, one event at a time: the listeners are idle
			// and the reader delivers these itself.
			for k := range listeners {
				if _, err := infs[k].Publish(bg(), i); err != nil {
					t.Fatal(err)
				}
				caughtUp(i, k)
			}
			continue
		}
		k := i % listeners
		for j := range int64(listeners) {
			if _, err := infs[(k+j)%listeners].Publish(bg(), i); err != nil {
				t.Fatal(err)
			}
		}
		if i%50 == 0 {
			caughtUp(i, 0, 1, 2) // a pause
		}
	}
	for range listeners {
		receive(t, done)
	}
	for k := range all {
		if bad := all[k].bad.Load(); bad != 0 {
			t.Errorf("listener %d: %d events out of order or overlapping", k, bad)
		}
	}
	st := sub.Stats()
	if st.QuickDeliveries == 0 {
		t.Fatalf("bus stats %+v: want quick deliveries", st)
	}
	t.Logf("%d quick deliveries, %d handed on", st.QuickDeliveries, st.QuickHandOns)
}

// spin runs for d without sleeping, as a busy handler does.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// TestQuickServer: requests that find a LocalServer method idle are
// served by the connection's reader itself, and a method that calls
// another server, whose reply only that reader can deliver, still gets
// it: the reading is handed on.
func TestQuickServer(t *testing.T) {
	const sc = "/quick/rpc/"
	a, b, routeB := quickPair(t, sc)
	routeA := awaitRouteReader(t, b, a, mustScope(sc))
	incServer(t, a, sc+"a/", "inner")
	outer, err := b.NewLocalServer(mustScope(sc + "b/"))
	if err != nil {
		t.Fatal(err)
	}
	toInner, _ := b.NewRemoteServer(mustScope(sc + "a/"))
	if err := outer.AddMethod("echo", func(_ context.Context, req *Event) (any, error) { return req.Payload, nil }); err != nil {
		t.Fatal(err)
	}
	if err := outer.AddMethod("outer", func(ctx context.Context, req *Event) (any, error) {
		return toInner.Call(ctx, "inner", req.Payload) // its reply comes through b's reader
	}); err != nil {
		t.Fatal(err)
	}
	toOuter, _ := a.NewRemoteServer(mustScope(sc + "b/"))
	routeA.Close()
	routeB.Close()
	call := func(method string, arg int64) any {
		t.Helper()
		ctx, cancel := context.WithTimeout(bg(), 10*time.Second)
		defer cancel()
		got, err := toOuter.Call(ctx, method, arg)
		if err != nil {
			t.Fatalf("%s(%d): %v", method, arg, err)
		}
		return got
	}
	const n = 50
	for i := range int64(n) {
		if got := call("echo", i); got != i {
			t.Fatalf("echo(%d) = %v", i, got)
		}
	}
	if st := b.Stats(); st.QuickDeliveries < n/2 {
		t.Fatalf("bus stats %+v: want most of %d requests served quickly", st, n)
	}
	for i := range int64(5) {
		if got := call("outer", i); got != i+1 {
			t.Fatalf("outer(%d) = %v", i, got)
		}
	}
	if st := b.Stats(); st.QuickHandOns == 0 {
		t.Fatalf("bus stats %+v: want the outer call's reading handed on", st)
	}
}

// TestQuickWaitsHandOn: handlers the reader runs itself that wait for
// what only the reader delivers, a RemoteServer call's reply and a
// Reader's next event, hand the reading on when they start waiting: with
// the guard's tick stretched to an hour both would hang without that.
func TestQuickWaitsHandOn(t *testing.T) {
	const sc = "/quick/waits/"
	addr := clienttest.StartNodes(t, 1)[0].SocketAddr().String()
	ctx, cancel := context.WithTimeout(bg(), 5*time.Second)
	defer cancel()
	sub, err := DialConfig(ctx, addr, Config{Logger: testLogger(), quickTick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pub := dialNode(t, addr)
	route := awaitRouteReader(t, pub, sub, mustScope(sc))
	routeBack := awaitRouteReader(t, sub, pub, mustScope(sc))
	incServer(t, pub, sc+"srv/", "inc")
	remote, _ := sub.NewRemoteServer(mustScope(sc + "srv/"))
	later, err := sub.NewReader(mustScope(sc + "later/"))
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan string, 2)
	caller, _ := sub.NewListener(mustScope(sc + "call/"))
	caller.AddHandler(func(ev *Event) error {
		ctx, cancel := context.WithTimeout(bg(), 20*time.Second)
		defer cancel()
		got, err := remote.Call(ctx, "inc", ev.Payload)
		results <- fmt.Sprintf("call: %v %v", got, err)
		return nil
	})
	reader, _ := sub.NewListener(mustScope(sc + "read/"))
	reader.AddHandler(func(*Event) error {
		ctx, cancel := context.WithTimeout(bg(), 20*time.Second)
		defer cancel()
		ev, err := later.Read(ctx)
		if err == nil {
			results <- fmt.Sprintf("read: %v", ev.Payload)
		} else {
			results <- fmt.Sprintf("read: %v", err)
		}
		return nil
	})
	route.Close()
	routeBack.Close()
	callInf, _ := pub.NewInformer(mustScope(sc + "call/"))
	if _, err := callInf.Publish(bg(), int64(41)); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, results); got != "call: 42 <nil>" {
		t.Fatalf("the handler's call gave %q", got)
	}
	readInf, _ := pub.NewInformer(mustScope(sc + "read/"))
	laterInf, _ := pub.NewInformer(mustScope(sc + "later/"))
	if _, err := readInf.Publish(bg(), "go"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the reading handler to run", func() bool { return reader.Stats().Handled > 0 })
	if _, err := laterInf.Publish(bg(), "later"); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, results); got != "read: later" {
		t.Fatalf("the handler's read gave %q", got)
	}
	if st := sub.Stats(); st.QuickHandOns < 2 || st.QuickDeliveries < 2 {
		t.Fatalf("bus stats %+v: want both handlers run quickly and handing on", st)
	}
}

// incServer serves method on a LocalServer of b on sc: it answers an int64
// request with the next integer.
func incServer(t *testing.T, b *Bus, sc, method string) {
	t.Helper()
	srv, err := b.NewLocalServer(mustScope(sc))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddMethod(method, func(_ context.Context, req *Event) (any, error) { return req.Payload.(int64) + 1, nil }); err != nil {
		t.Fatal(err)
	}
}
