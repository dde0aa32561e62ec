package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// fakeWriter records the frames a sender writes and the calls that wrote
// them; while gate is set, each SendMany waits for a value from it.
// TrySend does what try says.
type fakeWriter struct {
	mu     sync.Mutex
	frames []string
	calls  []int // frames per call; a TrySend that took a frame counts as -1
	gate   chan error
	inCall chan struct{} // told when a SendMany starts, if set
	try    tryMode
	owed   []byte // the frame a partial TrySend began
}

// tryMode is what a fakeWriter's TrySend does.
type tryMode int

const (
	tryTake    tryMode = iota // the socket takes the frame whole
	tryNothing                // the socket is full
	tryPart                   // the socket takes part: the frame is owed
	tryFail                   // the connection fails
)

func (w *fakeWriter) TrySend(body []byte) (taken, owes bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch w.try {
	case tryNothing:
		return false, false, nil
	case tryPart:
		w.owed = body
		return true, true, nil
	case tryFail:
		return true, false, errors.New("connection reset")
	}
	w.frames = append(w.frames, string(body))
	w.calls = append(w.calls, -1)
	return true, false, nil
}

func (w *fakeWriter) enter() error {
	if w.inCall != nil {
		w.inCall <- struct{}{}
	}
	w.mu.Lock()
	gate := w.gate // ungate clears it
	w.mu.Unlock()
	if gate != nil {
		return <-gate
	}
	return nil
}

func (w *fakeWriter) SendMany(bodies [][]byte) error {
	if err := w.enter(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.owed != nil {
		w.frames = append(w.frames, string(w.owed))
		w.owed = nil
	}
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
	if err := s.send(context.Background(), frame(0), 0); err != nil {
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
	if err := s.send(context.Background(), frame(0), 0); err != nil {
		t.Fatal(err)
	}
	<-w.inCall // the goroutine writes frame 0 and waits in it
	for i := 1; i < 100; i++ {
		if err := s.send(context.Background(), frame(i), 0); err != nil {
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
	if err := s.send(context.Background(), frame(0), 0); err != nil {
		t.Fatal(err)
	}
	<-w.inCall
	big := make([]byte, (sendQueueBytes-len(frame(0)))/2-rsbsocket.FrameOverhead*3/2)
	for range 2 {
		if err := s.send(context.Background(), big, 0); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.send(ctx, []byte("x"), 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send past the bound: %v, want the context's deadline", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- s.send(context.Background(), big, 0) }()
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
		if err := s.send(context.Background(), frame(i), 0); err != nil {
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
	if err := s.send(context.Background(), frame(10), 0); !errors.Is(err, ErrDisconnected) {
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
		if err := s.send(context.Background(), frame(i), 0); err != nil {
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
	w.gate <- fmt.Errorf("%w: use of closed connection", sockclient.ErrClosed) // the link closed it
	<-closed
	if n := s.unsentFrames(); n != 5 {
		t.Fatalf("%d unsent, want 5", n)
	}
	if err := s.send(context.Background(), frame(5), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after close: %v, want ErrClosed", err)
	}
}

// flushWithin is s.flush bounded by timeout.
func flushWithin(s *sender, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.flush(ctx)
}

// TestSenderOffersALoneFrame: a frame that comes alone, after a pause of
// inlineGapMicros, is written before send returns, on the caller's
// goroutine; frames closer together than the gap are queued.
func TestSenderOffersALoneFrame(t *testing.T) {
	w := &fakeWriter{}
	s, _ := testSender(t, w)
	at := int64(1_000_000)
	if err := s.send(context.Background(), frame(0), at); err != nil {
		t.Fatal(err)
	}
	if got, calls := w.written(); !slices.Equal(got, framesUpTo(1)) || !slices.Equal(calls, []int{-1}) {
		t.Fatalf("after a lone send: written %v in calls %v", got, calls)
	}
	for i := 1; i < 4; i++ { // 1 µs apart: queued
		if err := s.send(context.Background(), frame(i), at+int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if flushWithin(s, 10*time.Second) != nil {
		t.Fatal("flush failed")
	}
	got, calls := w.written()
	if !slices.Equal(got, framesUpTo(4)) || calls[0] != -1 || slices.Contains(calls[1:], -1) {
		t.Fatalf("written %v in calls %v, want the first offered and the rest queued", got, calls)
	}
}

// TestSenderOfferNotTaken: a lone frame the socket does not take is
// queued ahead of the frames sent meanwhile; one it takes in part is owed,
// and the goroutine finishes it before the frames queued after it.
func TestSenderOfferNotTaken(t *testing.T) {
	for _, mode := range []tryMode{tryNothing, tryPart} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			w := &fakeWriter{try: mode, gate: make(chan error), inCall: make(chan struct{})}
			s, _ := testSender(t, w)
			if err := s.send(context.Background(), frame(0), 1_000_000); err != nil {
				t.Fatal(err)
			}
			if flushWithin(s, 10*time.Millisecond) == nil {
				t.Fatal("flush returned with frame 0 unwritten")
			}
			<-w.inCall // the goroutine writes (or finishes) frame 0, held
			for i := 1; i < 3; i++ {
				if err := s.send(context.Background(), frame(i), 2_000_000+int64(i)*1000); err != nil {
					t.Fatal(err)
				}
			}
			w.gate <- nil
			<-w.inCall
			w.gate <- nil
			if err := flushWithin(s, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			if got, _ := w.written(); !slices.Equal(got, framesUpTo(3)) {
				t.Fatalf("written %v", got)
			}
			s.mu.Lock()
			bytes := s.bytes
			s.mu.Unlock()
			if bytes != 0 {
				t.Fatalf("%d bytes still charged with everything written", bytes)
			}
		})
	}
}

// TestSenderOfferFails: a lone frame whose write fails fails its send and
// ends the sender.
func TestSenderOfferFails(t *testing.T) {
	w := &fakeWriter{try: tryFail}
	s, fails := testSender(t, w)
	if err := s.send(context.Background(), frame(0), 1_000_000); !errors.Is(err, ErrDisconnected) {
		t.Fatalf("offer over a failing connection: %v, want ErrDisconnected", err)
	}
	if n := s.unsentFrames(); n != 1 || len(*fails) != 1 {
		t.Fatalf("%d unsent, failures %v", n, *fails)
	}
	if err := s.send(context.Background(), frame(1), 2_000_000); !errors.Is(err, ErrDisconnected) {
		t.Fatalf("send after the failure: %v, want ErrDisconnected", err)
	}
}

// TestSenderEncodesEvents: events sent as events are encoded into the
// sender's arena (small ones, across several arenas) or memory of their
// own (large ones); every frame is the event's encoding, in order, and an
// event Marshal refuses is refused without queueing anything.
func TestSenderEncodesEvents(t *testing.T) {
	w := &fakeWriter{}
	s, _ := testSender(t, w)
	sc := mustScope("/arena/")
	var want []string
	for i := range 300 {
		size := 100 + i*13
		if i%50 == 49 {
			size = sendArenaFrame + i
		}
		ev, enc := encodedEvent(t, sc, i, size)
		want = append(want, enc)
		if err := s.sendEvent(context.Background(), ev, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.sendEvent(context.Background(), &notification.Event{}, 1000); !errors.Is(err, notification.ErrBadScope) {
		t.Fatalf("an event without a scope: %v, want ErrBadScope", err)
	}
	if err := flushWithin(s, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.written(); !slices.Equal(got, want) {
		t.Fatalf("%d frames written, want %d, or a frame differs", len(got), len(want))
	}
}
