package streamcall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/mesh/frame"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// waitTimeout bounds the tests' waits: generous, machines are shared.
const waitTimeout = 20 * time.Second

// embeddedBus returns a Bus on a fresh embedded node.
func embeddedBus(t *testing.T) *client.Bus {
	t.Helper()
	bus := client.Embedded(clienttest.StartNodes(t, 1)[0])
	t.Cleanup(func() { _ = bus.Close() })
	return bus
}

// serve serves h on sc for the test.
func serve(t *testing.T, bus *client.Bus, sc string, h Handler) *Server {
	t.Helper()
	s, err := Serve(bus, scope.MustParse(sc), h, clienttest.Logger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// counting writes n chunks "0", "1", … and returns.
func counting(n int) Handler {
	return func(ctx context.Context, req *Request, w *Writer) error {
		for i := range n {
			if err := w.Write(ctx, fmt.Appendf(nil, "%d", i)); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestThousandChunksInOrder: a call of 1 000 chunks arrives complete and
// in order, then the last chunk, then io.EOF.
func TestThousandChunksInOrder(t *testing.T) {
	bus := embeddedBus(t)
	var got Request
	serve(t, bus, "/llm/", func(ctx context.Context, req *Request, w *Writer) error {
		got = *req
		return counting(1000)(ctx, req, w)
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	s, err := Call(ctx, bus, scope.MustParse("/llm/"), Request{Prompt: []byte("count"), Model: "m1", Conv: "c1",
		Attrs: []frame.Attr{{Name: "x-user", Value: "u"}}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for c, err := range s.Chunks() {
		if err != nil {
			t.Fatalf("after %d chunks: %v", n, err)
		}
		if c.Done {
			if n != 1000 || len(c.Data) != 0 {
				t.Fatalf("done after %d chunks, data %q", n, c.Data)
			}
			continue
		}
		if want := fmt.Sprint(n); string(c.Data) != want || c.Seq != uint32(n) {
			t.Fatalf("chunk %d: seq %d %q", n, c.Seq, c.Data)
		}
		n++
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the end: %v", err)
	}
	if string(got.Prompt) != "count" || got.Model != "m1" || got.Conv != "c1" || got.Timeout <= 0 ||
		len(got.Attrs) != 1 || got.Attrs[0].Value != "u" {
		t.Errorf("server saw %+v", got)
	}
}

// TestHandlerError: a handler's error reaches the caller as a RemoteError
// on the last chunk, after the chunks written before it.
func TestHandlerError(t *testing.T) {
	bus := embeddedBus(t)
	serve(t, bus, "/fail/", func(ctx context.Context, req *Request, w *Writer) error {
		_ = w.WriteChunk(ctx, Chunk{Data: []byte("partial"), EventType: "token", Meta: `{"k":1}`})
		return errors.New("model overloaded")
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	s, err := Call(ctx, bus, scope.MustParse("/fail/"), Request{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Recv()
	if err != nil || string(c.Data) != "partial" || c.EventType != "token" || c.Meta != `{"k":1}` {
		t.Fatalf("first chunk %+v %v", c, err)
	}
	c, err = s.Recv()
	var re *RemoteError
	if !errors.As(err, &re) || re.Message != "model overloaded" || !c.Done || !errors.Is(err, ErrRemote) {
		t.Fatalf("last chunk %+v, err %v", c, err)
	}
}

// fakeServer answers each request on sc's call scope with the chunks
// chunks returns, published as they are: a server that loses some.
func fakeServer(t *testing.T, bus *client.Bus, sc string, chunks func() []Chunk) {
	t.Helper()
	inf, err := bus.NewInformer(scope.Root)
	if err != nil {
		t.Fatal(err)
	}
	l, err := bus.NewListener(scope.MustParse(sc + callSuffix + "/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(); _ = inf.Close() })
	l.AddHandler(func(ev *client.Event) error {
		f, err := decode(ev.Data, frame.StreamReq)
		if err != nil {
			return nil
		}
		req, err := parseRequest(f)
		if err != nil {
			t.Error(err)
			return nil
		}
		for _, c := range chunks() {
			b, _ := frame.Marshal(chunkFrame(req.Session, &c))
			out := &client.Event{}
			out.Scope, out.Data, out.WireSchema = req.ReplyTo, b, notification.SchemaBytes
			if err := inf.PublishEvent(context.Background(), out); err != nil {
				t.Error(err)
			}
		}
		return nil
	})
}

// TestDroppedChunkIsAnError: a chunk dropped on purpose is reported to the
// caller as ErrLost within the call's deadline (after the gap timeout), a
// dropped last chunk as ErrDeadline at the deadline: never a hang.
func TestDroppedChunkIsAnError(t *testing.T) {
	bus := embeddedBus(t)
	fakeServer(t, bus, "/lossy/mid/", func() []Chunk {
		return []Chunk{{Seq: 0}, {Seq: 1}, {Seq: 3}, {Seq: 4, Done: true}}
	})
	fakeServer(t, bus, "/lossy/last/", func() []Chunk { return []Chunk{{Seq: 0}, {Seq: 1}} })
	for _, tc := range []struct {
		sc     string
		want   error
		chunks int
	}{{"/lossy/mid/", ErrLost, 2}, {"/lossy/last/", ErrDeadline, 2}} {
		t.Run(tc.sc, func(t *testing.T) {
			c, err := NewCaller(bus, scope.MustParse(tc.sc), CallerConfig{GapTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			deadline := time.Now().Add(3 * time.Second)
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			s, err := c.Call(ctx, Request{Prompt: []byte("p")})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, err = range s.Chunks() {
				if err != nil {
					break
				}
				n++
			}
			if !errors.Is(err, tc.want) || n != tc.chunks {
				t.Fatalf("after %d chunks: %v, want %v", n, err, tc.want)
			}
			if over := time.Since(deadline); over > time.Second {
				t.Errorf("reported %v after the deadline", over)
			}
		})
	}
}

// TestCancelReachesServer: the caller cancelling its context cancels the
// handler's context with ErrCancelled, while the caller reads nothing.
func TestCancelReachesServer(t *testing.T) {
	bus := embeddedBus(t)
	causes := make(chan error, 1)
	started := make(chan struct{})
	srv := serve(t, bus, "/slow/", func(ctx context.Context, req *Request, w *Writer) error {
		close(started)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Call(ctx, bus, scope.MustParse("/slow/"), Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	select {
	case <-started:
	case <-time.After(waitTimeout):
		t.Fatal("the handler never ran")
	}
	cancel()
	select {
	case cause := <-causes:
		if !errors.Is(cause, ErrCancelled) {
			t.Fatalf("handler's cause %v", cause)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the cancel never reached the server")
	}
	if _, err := s.Recv(); !errors.Is(err, context.Canceled) {
		t.Errorf("caller's Recv: %v", err)
	}
	testutil.WaitFor(t, waitTimeout, "the server forgets the stream", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.streams) == 0 && srv.Stats().Cancelled.Load() == 1
	})
}

// TestTimeoutReachesServer: the request's timeout bounds the handler's
// context even when no cancel arrives.
func TestTimeoutReachesServer(t *testing.T) {
	bus := embeddedBus(t)
	deadlines := make(chan time.Duration, 1)
	serve(t, bus, "/t/", func(ctx context.Context, req *Request, w *Writer) error {
		d, _ := ctx.Deadline()
		deadlines <- time.Until(d)
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := Call(ctx, bus, scope.MustParse("/t/"), Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	select {
	case d := <-deadlines:
		if d <= 0 || d > 5*time.Second {
			t.Fatalf("handler's deadline in %v", d)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the handler never ran")
	}
}

// TestNoServer: a call no server takes fails with ErrNoAnswer after the
// first chunk's timeout, well before its deadline.
func TestNoServer(t *testing.T) {
	bus := embeddedBus(t)
	c, err := NewCaller(bus, scope.MustParse("/nobody/"), CallerConfig{FirstChunkTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	start := time.Now()
	s, err := c.Call(ctx, Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); !errors.Is(err, ErrNoAnswer) || time.Since(start) > waitTimeout/2 {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
}
