package grpcbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/proto/grpcbuspb"
	pb "github.com/rsbd/rsbd/proto/grpcbustestpb"
)

// buffered returns the messages the server's only stream holds unsent.
func buffered(srv *Server) (msgs int, ok bool) {
	ss := srv.ep.snapshot()
	if len(ss) != 1 || ss[0].peerAddr.Load() == nil {
		return 0, false
	}
	q := ss[0].snd
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.msgs, true
}

// TestSlowReaderBoundsSender has a server stream far more messages than a
// window while its reader pauses: the server's handler blocks with at
// most window + buffer messages in flight, and the reader then gets every
// message once, in order.
func TestSlowReaderBoundsSender(t *testing.T) {
	for _, nodes := range []int{1, 2} {
		t.Run(fmt.Sprintf("nodes=%d", nodes), func(t *testing.T) { slowReader(t, nodes) })
	}
}

func slowReader(t *testing.T, k int) {
	nodes := clienttest.StartNodes(t, k)
	reg := prometheus.NewRegistry()
	cfg := testConfig()
	cfg.InitialWindow, cfg.MaxBufferedWrites, cfg.Registerer = 8, 4, reg
	// Flow control is under test, not liveness: a loaded host may delay a
	// ping past the tests' short timeout.
	cfg.PingInterval, cfg.PingTimeout = 500*time.Millisecond, 20*time.Second
	e := newEchoServer()
	srv := startBusServer(t, embeddedBus(t, k-1, nodes), e, cfg)
	conn := busConn(t, embeddedBus(t, 0, nodes), cfg)
	awaitServing(t, conn)
	const total = 500
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := pb.NewEchoClient(conn).ServerStream(ctx, &pb.EchoRequest{Text: "m", Count: total, Pad: make([]byte, 1024)})
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	check := func(r *pb.EchoResponse) {
		t.Helper()
		if read++; r.Seq != int32(read) {
			t.Fatalf("message %d has seq %d", read, r.Seq)
		}
	}
	for range 3 {
		r, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		check(r)
	}
	// The reader pauses: the server fills the window and its buffer, then
	// blocks in Send.
	limit := int64(read + cfg.InitialWindow + cfg.MaxBufferedWrites + 1)
	testutil.WaitFor(t, 10*time.Second, "server blocked on a full buffer", func() bool {
		n, ok := buffered(srv)
		return ok && n == cfg.MaxBufferedWrites
	})
	if sent := e.sent.Load(); sent > limit {
		t.Errorf("server sent %d messages to a reader that read %d; bound %d", sent, read, limit)
	}
	for {
		r, err := st.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Errorf("the stream ended after %d of %d messages: %v", read, total, err)
			}
			break
		}
		check(r)
		if n, ok := buffered(srv); ok && n > cfg.MaxBufferedWrites {
			t.Fatalf("server buffers %d messages", n)
		}
	}
	if read != total {
		t.Errorf("read %d of %d", read, total)
	}
	if counter(t, reg, "rsbd_grpc_window_stalls_total", "side", "server") == 0 {
		t.Error("no window stall counted")
	}
}

// TestDuplicateWindowUpdateGrantsNothing repeats, at the frame level, the
// WindowUpdate a paused reader sent: the server drops and counts the copy,
// and its spent window stays spent.
func TestDuplicateWindowUpdateGrantsNothing(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	bus := embeddedBus(t, 0, nodes)
	reg := prometheus.NewRegistry()
	cfg := testConfig()
	cfg.InitialWindow, cfg.MaxBufferedWrites, cfg.Registerer = 8, 4, reg
	// Flow control is under test, not liveness: a loaded host may delay a
	// ping past the tests' short timeout.
	cfg.PingInterval, cfg.PingTimeout = 500*time.Millisecond, 20*time.Second
	srv := startBusServer(t, bus, newEchoServer(), cfg)
	conn := busConn(t, bus, cfg)
	awaitServing(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := pb.NewEchoClient(conn).ServerStream(ctx, &pb.EchoRequest{Text: "m", Count: 100})
	if err != nil {
		t.Fatal(err)
	}
	half := cfg.InitialWindow / 2
	for range half { // the reader takes half a window: it grants more
		if _, err := st.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cin := conn.ep.snapshot()[0].inbox
	cin.mu.Lock()
	cum := cin.win.grants
	cin.mu.Unlock()
	if cum == 0 {
		t.Fatal("the reader granted nothing after half a window")
	}
	s := srv.ep.snapshot()[0]
	testutil.WaitFor(t, 10*time.Second, "server blocked on a full buffer with the grant spent", func() bool {
		s.snd.mu.Lock()
		defer s.snd.mu.Unlock()
		return s.snd.granted == cum && s.snd.credits == 0 && s.snd.msgs == cfg.MaxBufferedWrites
	})
	dup := &grpcbuspb.TransportFrame{StreamId: s.id, StreamSequence: cum,
		Frame: &grpcbuspb.TransportFrame_WindowUpdate{WindowUpdate: &grpcbuspb.WindowUpdate{Delta: uint32(half)}}}
	if err := conn.ep.sendFrame(ctx, srv.ep.scope, WireProto, dup, nil); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "duplicate counted", func() bool {
		return counter(t, reg, "rsbd_grpc_frames_dropped_total", "side", "server", "reason", dropDuplicate) == 1
	})
	s.snd.mu.Lock()
	credits, msgs := s.snd.credits, s.snd.msgs
	s.snd.mu.Unlock()
	if credits != 0 || msgs != cfg.MaxBufferedWrites {
		t.Errorf("after a duplicate WindowUpdate: %d credits, %d messages buffered; want 0, %d", credits, msgs, cfg.MaxBufferedWrites)
	}
}

// TestSlowReaderBoundsBytes lets a stream's window grow while its reader
// keeps up with messages of 1 KiB, then pauses the reader: the window
// grew past the initial one, and what the paused reader holds and the
// server sent beyond it stay within WindowBytes, not the message cap.
func TestSlowReaderBoundsBytes(t *testing.T) {
	for _, nodes := range []int{1, 2} {
		t.Run(fmt.Sprintf("nodes=%d", nodes), func(t *testing.T) { slowReaderBytes(t, nodes) })
	}
}

func slowReaderBytes(t *testing.T, k int) {
	nodes := clienttest.StartNodes(t, k)
	cfg := testConfig()
	cfg.InitialWindow, cfg.MaxWindow, cfg.WindowBytes, cfg.MaxBufferedWrites = 8, 1024, 32<<10, 4
	cfg.PingInterval, cfg.PingTimeout = 500*time.Millisecond, 20*time.Second
	e := newEchoServer()
	srv := startBusServer(t, embeddedBus(t, k-1, nodes), e, cfg)
	conn := busConn(t, embeddedBus(t, 0, nodes), cfg)
	awaitServing(t, conn)
	const total, early, size = 1500, 600, 1024
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := pb.NewEchoClient(conn).ServerStream(ctx, &pb.EchoRequest{Text: "m", Count: total, Pad: make([]byte, size)})
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	recv := func() bool {
		t.Helper()
		r, err := st.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Errorf("the stream ended after %d of %d messages: %v", read, total, err)
			}
			return false
		}
		if read++; r.Seq != int32(read) {
			t.Fatalf("message %d has seq %d", read, r.Seq)
		}
		return true
	}
	for read < early && recv() {
	}
	testutil.WaitFor(t, 10*time.Second, "server blocked on a full buffer", func() bool {
		n, ok := buffered(srv)
		return ok && n == cfg.MaxBufferedWrites
	})
	cs := conn.ep.snapshot()
	if len(cs) != 1 {
		t.Fatalf("%d client streams", len(cs))
	}
	b := cs[0].inbox
	msgs, bytes, outstanding := b.held()
	b.mu.Lock()
	win := b.win.win
	b.mu.Unlock()
	most := cfg.WindowBytes / (size + queuedOverhead)
	if win <= cfg.InitialWindow {
		t.Errorf("the window stayed at %d while the reader kept up", win)
	}
	if bytes > cfg.WindowBytes || outstanding > most {
		t.Errorf("the paused reader holds %d messages, %d B, with %d credits out; budget %d B, %d messages", msgs, bytes, outstanding, cfg.WindowBytes, most)
	}
	if sent, limit := e.sent.Load(), int64(read+most+cfg.MaxBufferedWrites+1); sent > limit {
		t.Errorf("server sent %d messages to a reader that read %d; bound %d", sent, read, limit)
	}
	for recv() {
	}
	if read != total {
		t.Errorf("read %d of %d", read, total)
	}
}
