package client

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	sockframe "github.com/rsbd/rsbd/rsbsocket/frame"
)

// TestBurstThenClose: a burst of events published in a loop, the Bus
// closed right after, all arrive, in order: Publish queues them and Close
// writes the queue out before it closes the connection.
func TestBurstThenClose(t *testing.T) {
	n := clienttest.StartNodes(t, 1)[0]
	pub, sub := dialNode(t, n.SocketAddr().String()), dialNode(t, n.SocketAddr().String())
	sc := mustScope("/burst/")
	awaitRoute(t, pub, sub, sc)
	rd, err := sub.NewReader(sc, WithQueue(1<<16, DropNewest))
	if err != nil {
		t.Fatal(err)
	}
	inf, err := pub.NewInformer(sc)
	if err != nil {
		t.Fatal(err)
	}
	const count = 20000
	for i := range count {
		if _, err := inf.Publish(bg(), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Flush returns once the burst is written, Close then has nothing
	// left to write.
	if err := pub.Flush(bg()); err != nil {
		t.Fatal(err)
	}
	s := pub.link.(*socketLink).send
	s.mu.Lock()
	left, writing := len(s.pending), s.writing
	s.mu.Unlock()
	if left != 0 || writing {
		t.Fatalf("after Flush: %d frames queued, writing %v", left, writing)
	}
	if err := pub.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(bg()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Flush after Close: %v, want ErrClosed", err)
	}
	if st := pub.Stats(); st.Unsent != 0 {
		t.Fatalf("%d events unsent", st.Unsent)
	}
	for i := range count {
		ev := readSkippingProbes(t, rd, 10*time.Second)
		if v, ok := ev.Payload.(int64); !ok || v != int64(i) {
			t.Fatalf("event %d: payload %#v", i, ev.Payload)
		}
	}
}

// TestPublishToAStuckServer: a server that never reads makes Publish wait
// for room once the link's queue is full, as long as the context lets it;
// when the server then drops the connection, Publish fails with
// ErrDisconnected and the events queued and never written are counted.
func TestPublishToAStuckServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conns := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
		if sockframe.WriteHandshake(c) == nil {
			conns <- c
		}
	}()
	ctx, cancel := context.WithTimeout(bg(), 10*time.Second)
	defer cancel()
	b, err := DialConfig(ctx, ln.Addr().String(), Config{Logger: testLogger(), NoIntrospection: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	srv := <-conns
	inf, err := b.NewInformer(mustScope("/stuck/"))
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 64<<10)
	published := 0
	for {
		ctx, cancel := context.WithTimeout(bg(), 200*time.Millisecond)
		_, err := inf.Publish(ctx, payload)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if published++; published > 4*sendQueueBytes/len(payload)+1000 {
			t.Fatalf("%d events published to a server that reads nothing", published)
		}
	}
	// Flush waits for the queue as long as its context lets it.
	fctx, fcancel := context.WithTimeout(bg(), 50*time.Millisecond)
	err = b.Flush(fctx)
	fcancel()
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Flush to a stuck server: %v, want ErrTimeout", err)
	}
	// Reset the connection: the write under way fails.
	_ = srv.(*net.TCPConn).SetLinger(0)
	_ = srv.Close()
	testutil.WaitFor(t, 10*time.Second, "the failed write", func() bool {
		_, err := inf.Publish(bg(), payload)
		return errors.Is(err, ErrDisconnected)
	})
	if err := b.Flush(bg()); !errors.Is(err, ErrDisconnected) {
		t.Fatalf("Flush after the connection failed: %v, want ErrDisconnected", err)
	}
	if st := b.Stats(); st.Unsent == 0 || st.Unsent > uint64(published) {
		t.Fatalf("%d unsent of %d published", st.Unsent, published)
	}
}

// TestConcurrentPublishers: events of publishers on many goroutines all
// arrive, each publisher's in order.
func TestConcurrentPublishers(t *testing.T) {
	n := clienttest.StartNodes(t, 1)[0]
	pub, sub := dialNode(t, n.SocketAddr().String()), dialNode(t, n.SocketAddr().String())
	sc := mustScope("/concurrent/")
	awaitRoute(t, pub, sub, sc)
	rd, err := sub.NewReader(sc, WithQueue(1<<16, DropNewest))
	if err != nil {
		t.Fatal(err)
	}
	const publishers, each = 8, 2000
	infs := make([]*Informer, publishers)
	for i := range infs {
		if infs[i], err = pub.NewInformer(sc); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, inf := range infs {
		wg.Go(func() {
			for i := range each {
				if _, err := inf.Publish(bg(), int64(i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	next := map[[16]byte]int64{}
	for range publishers * each {
		ev := readSkippingProbes(t, rd, 10*time.Second)
		id := [16]byte(ev.ID.SenderID)
		if v, ok := ev.Payload.(int64); !ok || v != next[id] {
			t.Fatalf("publisher %x: payload %#v, want %d", id[:4], ev.Payload, next[id])
		}
		next[id]++
	}
}
