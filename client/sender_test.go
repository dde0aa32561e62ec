package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/rsbsocket"
)

// fakeWriter records the frames a sender writes and the calls that wrote
// them; while gate is set, each call waits for a value from it.
type fakeWriter struct {
	mu     sync.Mutex
	frames []string
	calls  []int // frames per call
	gate   chan error
	inCall chan struct{} // told when a call starts, if set
}

func (w *fakeWriter) enter() error {
	if w.inCall != nil {
		w.inCall <- struct{}{}
	}
	if w.gate != nil {
		return <-w.gate
	}
	return nil
}

func (w *fakeWriter) SendMany(bodies [][]byte) error {
	if err := w.enter(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range bodies {
		w.frames = append(w.frames, string(b))
	}
	w.calls = append(w.calls, len(bodies))
	return nil
}

func (w *fakeWriter) written() ([]string, []int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.frames), slices.Clone(w.calls)
}

// testSender returns a sender on w and the failures it reported.
func testSender(t *testing.T, w *fakeWriter) (*sender, *[]error) {
	t.Helper()
	var fails []error
	var mu sync.Mutex
	s := newSender(w, func(err error) { mu.Lock(); fails = append(fails, err); mu.Unlock() })
	t.Cleanup(s.close)
	return s, &fails
}

func frame(i int) []byte { return []byte(fmt.Sprintf("frame %04d", i)) }

func framesUpTo(n int) (out []string) {
	for i := range n {
		out = append(out, string(frame(i)))
	}
	return out
}

// TestSenderQueues: send returns once the frame is queued, before it is
// written; the goroutine writes it, and flush waits for that.
func TestSenderQueues(t *testing.T) {
	w := &fakeWriter{gate: make(chan error)}
	s, _ := testSender(t, w)
	if err := s.send(context.Background(), frame(0)); err != nil {
		t.Fatal(err)
	}
	flushed := make(chan bool)
	go func() { flushed <- flushWithin(s, 10*time.Second) == nil }()
	w.gate <- nil
	if !<-flushed {
		t.Fatal("flush failed")
	}
	if got, calls := w.written(); !slices.Equal(got, framesUpTo(1)) || !slices.Equal(calls, []int{1}) {
		t.Fatalf("written %v in calls %v", got, calls)
	}
}

// TestSenderBatchesABurst: frames queued while the goroutine writes go
// out together in its next write, in order.
func TestSenderBatchesABurst(t *testing.T) {
	w := &fakeWriter{gate: make(chan error), inCall: make(chan struct{})}
	s, _ := testSender(t, w)
	if err := s.send(context.Background(), frame(0)); err != nil {
		t.Fatal(err)
	}
	<-w.inCall // the goroutine writes frame 0 and waits in it
	for i := 1; i < 100; i++ {
		if err := s.send(context.Background(), frame(i)); err != nil {
			t.Fatal(err)
		}
	}
	w.gate <- nil
	<-w.inCall // the other 99 at once
	w.gate <- nil
	if flushWithin(s, 10*time.Second) != nil {
		t.Fatal("flush failed")
	}
	got, calls := w.written()
	if !slices.Equal(got, framesUpTo(100)) || !slices.Equal(calls, []int{1, 99}) {
		t.Fatalf("written %v in calls %v, want 100 frames in calls of 1 and 99", got, calls)
	}
}

// TestSenderBound: past sendQueueBytes a publisher waits for room, or for
// its context; a written batch makes room.
func TestSenderBound(t *testing.T) {
	w := &fakeWriter{gate: make(chan error), inCall: make(chan struct{})}
	s, _ := testSender(t, w)
	if err := s.send(context.Background(), frame(0)); err != nil {
		t.Fatal(err)
	}
	<-w.inCall
	big := make([]byte, (sendQueueBytes-len(frame(0)))/2-rsbsocket.FrameOverhead*3/2)
	for range 2 {
		if err := s.send(context.Background(), big); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.send(ctx, []byte("x")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send past the bound: %v, want the context's deadline", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- s.send(context.Background(), big) }()
	w.gate <- nil // frame 0: still no room for a third big one
	<-w.inCall    // the two big ones
	w.gate <- nil
	if err := <-waited; err != nil { // room
		t.Fatal(err)
	}
	<-w.inCall
	w.gate <- nil
	if flushWithin(s, 10*time.Second) != nil {
		t.Fatal("flush failed")
	}
	if _, calls := w.written(); !slices.Equal(calls, []int{1, 2, 1}) {
		t.Fatalf("calls %v, want 1, 2 and 1 frames", calls)
	}
}

// TestSenderFailure: a failed write ends the sender: what it held is
// counted unsent, the failure is reported once, and later sends fail.
func TestSenderFailure(t *testing.T) {
	w := &fakeWriter{gate: make(chan error), inCall: make(chan struct{})}
	s, fails := testSender(t, w)
	for i := range 10 {
		if err := s.send(context.Background(), frame(i)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			<-w.inCall // the goroutine writes frame 0
		}
	}
	w.gate <- nil
	<-w.inCall
	w.gate <- errors.New("connection reset")
	if flushWithin(s, 10*time.Second) == nil {
		t.Fatal("flush reported success after a failed write")
	}
	if n := s.unsentFrames(); n != 9 {
		t.Fatalf("%d unsent, want 9", n)
	}
	if err := s.send(context.Background(), frame(10)); !errors.Is(err, ErrDisconnected) {
		t.Fatalf("send after the failure: %v, want ErrDisconnected", err)
	}
	if len(*fails) != 1 {
		t.Fatalf("failures reported: %v", *fails)
	}
}

// TestSenderClose: close counts what is still queued or being written as
// unsent, and later sends fail with ErrClosed; flush gives up at its
// timeout.
func TestSenderClose(t *testing.T) {
	w := &fakeWriter{gate: make(chan error), inCall: make(chan struct{})}
	s, _ := testSender(t, w)
	for i := range 5 {
		if err := s.send(context.Background(), frame(i)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			<-w.inCall // the goroutine writes frame 0 and waits in it
		}
	}
	if flushWithin(s, 10*time.Millisecond) == nil {
		t.Fatal("flush succeeded with a write held")
	}
	closed := make(chan struct{})
	go func() { s.close(); close(closed) }()
	w.gate <- fmt.Errorf("%w: use of closed connection", rsbsocket.ErrClosed) // the link closed it
	<-closed
	if n := s.unsentFrames(); n != 5 {
		t.Fatalf("%d unsent, want 5", n)
	}
	if err := s.send(context.Background(), frame(5)); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after close: %v, want ErrClosed", err)
	}
}

// flushWithin is s.flush bounded by timeout.
func flushWithin(s *sender, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.flush(ctx)
}
