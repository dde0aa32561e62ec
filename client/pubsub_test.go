package client

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/notification"
)

// TestPublishListenAcrossNodes publishes on one node and listens on another,
// over the socket protocol and embedded.
func TestPublishListenAcrossNodes(t *testing.T) {
	forEnvs(t, 2, func(t *testing.T, e env) {
		a, b := e.connect(t, 0), e.connect(t, 1)
		sc := mustScope("/pub/" + e.name + "/")
		awaitRoute(t, a, b, sc)
		l, err := b.NewListener(sc)
		if err != nil {
			t.Fatal(err)
		}
		got := collectEvents(t, l)
		inf, err := a.NewInformer(sc)
		if err != nil {
			t.Fatal(err)
		}
		// Types change and come back: the informer remembers the
		// converter of the last type, and must switch with the payload.
		values := []any{"hello", "again", int64(-7), true, 2.5, "back", []byte{0, 1, 2}, []byte{3}, nil, nil, "end"}
		for _, v := range values {
			if _, err := inf.Publish(bg(), v); err != nil {
				t.Fatal(err)
			}
			// A type without a converter fails and changes nothing.
			if _, err := inf.Publish(bg(), struct{ X int }{1}); !errors.Is(err, notification.ErrNoConverter) {
				t.Fatalf("publishing a type without converter: %v", err)
			}
		}
		for i, want := range values {
			ev := next(t, got)
			checkReceived(t, ev, inf, uint32(i))
			if want == nil {
				want = struct{}{}
			}
			if !equalPayload(ev.Payload, want) {
				t.Errorf("event %d payload %#v, want %#v", i, ev.Payload, want)
			}
		}
	})
}

// checkReceived checks the id, scope and timestamps of a received event.
func checkReceived(t *testing.T, ev *Event, inf *Informer, seq uint32) {
	t.Helper()
	if ev.PayloadErr != nil {
		t.Fatalf("payload error: %v", ev.PayloadErr)
	}
	if want := (notification.EventID{SenderID: inf.ID(), SequenceNumber: seq}); ev.ID != want {
		t.Errorf("id %v, want %v", ev.ID, want)
	}
	if ev.Scope != inf.Scope() {
		t.Errorf("scope %s, want %s", ev.Scope, inf.Scope())
	}
	md := ev.MetaData
	if md.CreateTime == 0 || md.SendTime < md.CreateTime || md.ReceiveTime < md.SendTime || md.DeliverTime < md.ReceiveTime {
		t.Errorf("timestamps out of order: %+v", md)
	}
}

func equalPayload(got, want any) bool {
	if gb, ok := got.([]byte); ok {
		wb, ok := want.([]byte)
		return ok && string(gb) == string(wb)
	}
	return got == want
}

// TestSubScopes checks that a listener gets its scope and sub-scopes only,
// and that an informer refuses scopes outside its own.
func TestSubScopes(t *testing.T) {
	forEnvs(t, 2, func(t *testing.T, e env) {
		a, b := e.connect(t, 0), e.connect(t, 1)
		base := "/sub/" + e.name
		sc := mustScope(base + "/a/")
		awaitRoute(t, a, b, sc)
		l, err := b.NewListener(sc)
		if err != nil {
			t.Fatal(err)
		}
		got := collectEvents(t, l)
		inf, err := a.NewInformer(mustScope(base))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{base + "/", base + "/ab/", base + "/a/b/c/", base + "/b/a/", base + "/a/"} {
			ev := &Event{Payload: s}
			ev.Scope = mustScope(s)
			if err := inf.PublishEvent(bg(), ev); err != nil {
				t.Fatal(err)
			}
		}
		for _, want := range []string{base + "/a/b/c/", base + "/a/"} {
			if ev := next(t, got); ev.Scope.String() != want || ev.Payload != want {
				t.Errorf("got %s %v, want %s", ev.Scope, ev.Payload, want)
			}
		}
		quiet(t, got)
		ev := &Event{}
		ev.Scope = mustScope("/elsewhere/")
		if err := inf.PublishEvent(bg(), ev); !errors.Is(err, ErrScope) {
			t.Errorf("publish outside scope: %v, want ErrScope", err)
		}
	})
}

// TestFilters checks the method, origin, wire-schema and scope filters.
func TestFilters(t *testing.T) {
	forEnvs(t, 2, func(t *testing.T, e env) {
		a, b := e.connect(t, 0), e.connect(t, 1)
		sc := mustScope("/filter/" + e.name + "/")
		awaitRoute(t, a, b, sc)
		inf1, _ := a.NewInformer(sc)
		inf2, _ := a.NewInformer(sc)
		ls := map[string]<-chan *Event{}
		for name, f := range map[string]Filter{
			"method": MethodFilter("M"),
			"origin": OriginFilter(inf2.ID()),
			"schema": WireSchemaFilter(notification.SchemaInt64),
			"scope":  ScopeFilter(sc.Concat(mustScope("/x/"))),
		} {
			l, err := b.NewListener(sc, WithFilter(f))
			if err != nil {
				t.Fatal(err)
			}
			ls[name] = collectEvents(t, l)
		}
		all, _ := b.NewListener(sc)
		allCh := collectEvents(t, all)

		send := func(inf *Informer, method, sub string, v any) {
			ev := &Event{Payload: v}
			ev.Method = method
			if sub != "" {
				ev.Scope = sc.Concat(mustScope(sub))
			}
			if err := inf.PublishEvent(bg(), ev); err != nil {
				t.Fatal(err)
			}
		}
		send(inf1, "M", "", "method")
		send(inf2, "", "", "origin")
		send(inf1, "", "", int64(1))
		send(inf1, "", "/x/y", "scope")
		for range 4 {
			next(t, allCh) // all four arrived at b
		}
		want := map[string]any{"method": "method", "origin": "origin", "schema": int64(1), "scope": "scope"}
		for name, ch := range ls {
			if ev := next(t, ch); ev.Payload != want[name] {
				t.Errorf("%s filter passed %v, want %v", name, ev.Payload, want[name])
			}
			quiet(t, ch)
		}
	})
}

// TestListenersGetEventsOfTheirOwn: an event for one listener is decoded
// into the event its handler gets; listeners on the same link that receive
// the same frame each get an event of their own, with its own payload and
// times, so a handler that changes its event changes no other's.
func TestListenersGetEventsOfTheirOwn(t *testing.T) {
	forEnvs(t, 1, func(t *testing.T, e env) {
		a, b := e.connect(t, 0), e.connect(t, 0)
		sc := mustScope("/own/" + e.name + "/x/")
		awaitRoute(t, a, b, sc)
		var chans []<-chan *Event
		for _, s := range []string{"/own/" + e.name + "/", "/own/" + e.name + "/", "/own/" + e.name + "/x/"} {
			l, err := b.NewListener(mustScope(s))
			if err != nil {
				t.Fatal(err)
			}
			chans = append(chans, collectEvents(t, l))
		}
		soleSc := mustScope("/sole/" + e.name + "/")
		rd := awaitRouteReader(t, a, b, soleSc)
		sole, err := b.NewListener(soleSc)
		if err != nil {
			t.Fatal(err)
		}
		soleCh := collectEvents(t, sole)
		rd.Close() // the listener alone receives on soleSc
		inf, err := a.NewInformer(mustScope("/own/" + e.name + "/"))
		if err != nil {
			t.Fatal(err)
		}
		if err := inf.PublishEvent(bg(), &Event{Event: notification.Event{Scope: sc}, Payload: "shared"}); err != nil {
			t.Fatal(err)
		}
		seen := map[*Event]bool{}
		for i, ch := range chans {
			ev := next(t, ch)
			if seen[ev] {
				t.Fatalf("listener %d got an event another listener got", i)
			}
			seen[ev] = true
			if ev.Payload != "shared" || ev.MetaData.DeliverTime == 0 || ev.MetaData.ReceiveTime == 0 {
				t.Fatalf("listener %d: payload %#v, times %+v", i, ev.Payload, ev.MetaData)
			}
			ev.Payload, ev.MetaData.DeliverTime = "changed", -1
		}
		soleInf, err := a.NewInformer(soleSc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := soleInf.Publish(bg(), "sole"); err != nil {
			t.Fatal(err)
		}
		ev := next(t, soleCh)
		checkReceived(t, ev, soleInf, 0)
		if ev.Payload != "sole" {
			t.Fatalf("sole listener: payload %#v", ev.Payload)
		}
	})
}

// TestPublishDoesNotKeepTheCallersBytes: a []byte payload (or raw Data)
// may be reused once Publish returns; listeners on the publishing Bus
// itself, which get the event without the network, see what was published.
func TestPublishDoesNotKeepTheCallersBytes(t *testing.T) {
	forEnvs(t, 1, func(t *testing.T, e env) {
		b := e.connect(t, 0)
		sc := mustScope("/reuse/" + e.name + "/")
		l, err := b.NewListener(sc, WithQueue(64, DropNewest))
		if err != nil {
			t.Fatal(err)
		}
		got := collectEvents(t, l)
		inf, err := b.NewInformer(sc)
		if err != nil {
			t.Fatal(err)
		}
		buf := []byte("first")
		if _, err := inf.Publish(bg(), buf); err != nil {
			t.Fatal(err)
		}
		copy(buf, "XXXXX")
		raw := &Event{Event: notification.Event{WireSchema: notification.SchemaBytes, Data: []byte("second")}}
		if err := inf.PublishEvent(bg(), raw); err != nil {
			t.Fatal(err)
		}
		copy(raw.Data, "YYYYYY")
		for _, want := range []string{"first", "second"} {
			if ev := next(t, got); string(ev.Data) != want {
				t.Fatalf("got %q, want %q", ev.Data, want)
			}
		}
	})
}

// TestInlineDelivery: a listener WithInlineDelivery calls its handlers on
// the goroutine that receives from the bus, so over the socket protocol a
// handler that holds it up holds up the Bus's other listeners too (an
// embedded Bus's events from the same node are delivered on the
// publisher's goroutine, which the test cannot hold); it gets events in
// order and none after Close.
func TestInlineDelivery(t *testing.T) {
	forEnvs(t, 1, func(t *testing.T, e env) {
		a, b := e.connect(t, 0), e.connect(t, 0)
		sc := mustScope("/inline/" + e.name + "/")
		awaitRoute(t, a, b, sc)
		l, err := b.NewListener(sc, WithInlineDelivery())
		if err != nil {
			t.Fatal(err)
		}
		hold := e.name != "embedded"
		release := make(chan struct{})
		got := make(chan *Event, 16)
		l.AddHandler(func(ev *Event) error {
			if ev.Method == probeMethod {
				return nil
			}
			if hold && ev.Payload == int64(0) {
				<-release // hold up the receiving goroutine
			}
			got <- ev
			return nil
		})
		otherSc := mustScope("/inline-other/" + e.name + "/")
		rd := awaitRouteReader(t, a, b, otherSc)
		other, err := b.NewListener(otherSc)
		if err != nil {
			t.Fatal(err)
		}
		otherGot := collectEvents(t, other)
		rd.Close()
		inf, err := a.NewInformer(sc)
		if err != nil {
			t.Fatal(err)
		}
		otherInf, err := a.NewInformer(other.Scope())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inf.Publish(bg(), int64(0)); err != nil {
			t.Fatal(err)
		}
		if _, err := otherInf.Publish(bg(), "behind"); err != nil {
			t.Fatal(err)
		}
		if _, err := inf.Publish(bg(), int64(1)); err != nil {
			t.Fatal(err)
		}
		// Over the socket protocol one goroutine reads the connection:
		// the other listener's event waits behind the held handler.
		if hold {
			select {
			case ev := <-otherGot:
				t.Fatalf("event %v delivered while the inline handler held the reader", ev.Payload)
			case <-time.After(100 * time.Millisecond):
			}
		}
		close(release)
		for i := range int64(2) {
			if ev := next(t, got); ev.Payload != i {
				t.Fatalf("event %d: payload %#v", i, ev.Payload)
			}
		}
		next(t, otherGot)
		if st := l.Stats(); st.Queued < 2 || st.Handled < 2 || st.Dropped != 0 {
			t.Fatalf("stats %+v", st)
		}
		l.Close()
		if _, err := inf.Publish(bg(), int64(2)); err != nil {
			t.Fatal(err)
		}
		if _, err := otherInf.Publish(bg(), "after"); err != nil {
			t.Fatal(err)
		}
		next(t, otherGot) // the event after it was delivered...
		quiet(t, got)     // ...and the closed listener got nothing
	})
}

// TestReceivedEventsKeepTheirData: events a socket link reads one after
// the other into shared memory keep their data however long they are kept:
// events of many sizes, across several slabs and larger than one, all
// held until the last arrived, each still carries what was published.
func TestReceivedEventsKeepTheirData(t *testing.T) {
	n := clienttest.StartNodes(t, 1)[0]
	pub, sub := dialNode(t, n.SocketAddr().String()), dialNode(t, n.SocketAddr().String())
	sc := mustScope("/slab/")
	awaitRoute(t, pub, sub, sc)
	rd, err := sub.NewReader(sc, WithQueue(4096, DropNewest))
	if err != nil {
		t.Fatal(err)
	}
	inf, err := pub.NewInformer(sc)
	if err != nil {
		t.Fatal(err)
	}
	payload := func(i int) []byte {
		return bytes.Repeat([]byte{byte(i)}, (i*397)%(3*recvSlabBytes/2)+1)
	}
	const count = 400
	for i := range count {
		if _, err := inf.Publish(bg(), payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	kept := make([]*Event, count)
	for i := range kept {
		kept[i] = readSkippingProbes(t, rd, 10*time.Second)
	}
	for i, ev := range kept {
		if got, ok := ev.Payload.([]byte); !ok || !bytes.Equal(got, payload(i)) {
			t.Fatalf("event %d: %d bytes of payload, want %d bytes of %d", i, len(ev.Data), len(payload(i)), byte(i))
		}
	}
}
