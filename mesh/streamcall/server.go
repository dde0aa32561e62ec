package streamcall

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh/frame"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Handler answers one streamed call: it writes chunks with w and returns
// when the answer is complete; a returned error ends the stream with that
// error (the err attribute of the last chunk). ctx is cancelled when the
// caller cancels (its cause is ErrCancelled), when the request's timeout
// passes, or when the Server closes.
type Handler func(ctx context.Context, req *Request, w *Writer) error

// Server serves streamed calls on a scope.
type Server struct {
	bus  *client.Bus
	sc   scope.Scope
	h    Handler
	log  *slog.Logger
	l    *client.Listener
	inf  *client.Informer
	ctx  context.Context
	stop context.CancelFunc

	mu      sync.Mutex
	streams map[string]context.CancelCauseFunc
	wg      sync.WaitGroup
	once    sync.Once

	st ServerStats
}

// ServerStats counts what a Server did.
type ServerStats struct {
	// Calls counts the calls served; Cancelled those the caller cancelled;
	// Refused those refused (too many at once, or a malformed request).
	Calls, Cancelled, Refused atomic.Int64
	// Chunks counts the chunks written.
	Chunks atomic.Int64
}

// Serve serves streamed calls on sc with h until Close: requests arrive on
// <sc>/call/. log may be nil.
func Serve(bus *client.Bus, sc scope.Scope, h Handler, log *slog.Logger) (*Server, error) {
	if h == nil {
		return nil, fmt.Errorf("streamcall: nil handler")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	inf, err := bus.NewInformer(scope.Root)
	if err != nil {
		return nil, err
	}
	s := &Server{bus: bus, sc: sc, h: h, log: log, inf: inf, streams: make(map[string]context.CancelCauseFunc)}
	s.ctx, s.stop = context.WithCancel(context.Background())
	callSc := sc.Concat(scope.MustParse("/" + callSuffix))
	s.l, err = bus.NewListener(callSc, client.WithInlineDelivery(),
		client.WithFilter(func(ev *notification.Event) bool { return ev.Scope == callSc }))
	if err != nil {
		_ = inf.Close()
		return nil, err
	}
	s.l.AddHandler(s.receive)
	return s, nil
}

// Stats returns the server's counters.
func (s *Server) Stats() *ServerStats { return &s.st }

// receive handles a frame on the call scope: a request opens a stream, a
// chunk cancels one.
func (s *Server) receive(ev *client.Event) error {
	f, err := frame.Unmarshal(ev.Data)
	if err != nil {
		s.st.Refused.Add(1)
		return nil
	}
	switch f.Type {
	case frame.StreamReq:
		s.open(f)
	case frame.StreamChunk:
		if sid, _ := f.Get(frame.AttrSession); sid != "" {
			s.cancel(sid)
		}
	default:
		s.st.Refused.Add(1)
	}
	return nil
}

// open starts a stream's handler, or refuses it with an error chunk.
func (s *Server) open(f *frame.Frame) {
	req, err := parseRequest(f)
	if err != nil {
		s.st.Refused.Add(1)
		return
	}
	w := &Writer{s: s, sid: req.Session, to: req.ReplyTo}
	s.mu.Lock()
	_, dup := s.streams[req.Session]
	switch {
	case s.ctx.Err() != nil:
		err = ErrClosed
	case dup:
		err = fmt.Errorf("%w: session %s open already", ErrBadFrame, req.Session)
	case len(s.streams) >= DefaultMaxStreams:
		err = ErrTooManyStreams
	}
	if err != nil {
		s.mu.Unlock()
		s.st.Refused.Add(1)
		_ = w.finish(s.ctx, err)
		return
	}
	ctx, cancel := context.WithCancelCause(s.ctx)
	s.streams[req.Session] = cancel
	s.wg.Add(1)
	s.mu.Unlock()
	s.st.Calls.Add(1)
	go s.run(ctx, cancel, req, w)
}

// run runs the handler of one stream and sends its last chunk.
func (s *Server) run(ctx context.Context, cancel context.CancelCauseFunc, req *Request, w *Writer) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.streams, req.Session)
		s.mu.Unlock()
		cancel(nil)
	}()
	if req.Timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, req.Timeout)
		defer stop()
	}
	err := s.invoke(ctx, req, w)
	if errors.Is(context.Cause(ctx), ErrCancelled) {
		return // the caller is gone: no last chunk
	}
	if err := w.finish(ctx, err); err != nil && ctx.Err() == nil {
		s.log.Warn("streamcall: last chunk not sent", "scope", s.sc.String(), "err", err)
	}
}

// invoke calls the handler, turning a panic into an error.
func (s *Server) invoke(ctx context.Context, req *Request, w *Writer) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("streamcall: handler panicked", "scope", s.sc.String(), "panic", fmt.Sprint(p))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return s.h(ctx, req, w)
}

// cancel cancels the stream sid, if it runs.
func (s *Server) cancel(sid string) {
	s.mu.Lock()
	c := s.streams[sid]
	s.mu.Unlock()
	if c != nil {
		s.st.Cancelled.Add(1)
		c(ErrCancelled)
	}
}

// Close stops taking calls, cancels those running and waits for their
// handlers to return. It is idempotent.
func (s *Server) Close() error {
	s.once.Do(func() {
		_ = s.l.Close()
		s.mu.Lock()
		s.stop()
		s.mu.Unlock()
		s.wg.Wait()
		_ = s.inf.Close()
	})
	return nil
}

// Writer writes the chunks of one stream. It is used by the stream's
// handler alone.
type Writer struct {
	s    *Server
	sid  string
	to   scope.Scope
	seq  uint32
	done bool
	// buf is the last chunk's encoding, reused: PublishEvent keeps none
	// of an event's memory.
	buf []byte
}

// Write sends data as the next chunk.
func (w *Writer) Write(ctx context.Context, data []byte) error {
	return w.WriteChunk(ctx, Chunk{Data: data})
}

// WriteChunk sends c as the next chunk: Seq and Done are set by the
// Writer (the last chunk goes when the handler returns), EventType, Meta
// and Data are sent as given.
func (w *Writer) WriteChunk(ctx context.Context, c Chunk) error {
	if w.done {
		return ErrClosed
	}
	c.Done, c.Err = false, ""
	return w.send(ctx, c)
}

// WriteLast sends c as the last chunk (Done set), which the handler then
// returns after; its error return is ignored then.
func (w *Writer) WriteLast(ctx context.Context, c Chunk) error {
	if w.done {
		return ErrClosed
	}
	c.Done, c.Err = true, ""
	return w.send(ctx, c)
}

// finish sends the last chunk, carrying err's text if err is set.
func (w *Writer) finish(ctx context.Context, err error) error {
	if w.done {
		return nil
	}
	c := Chunk{Done: true}
	if err != nil {
		c.Err = truncate(strings.ToValidUTF8(err.Error(), "\uFFFD"))
		if c.Err == "" {
			c.Err = "error"
		}
	}
	if ctx.Err() != nil {
		// The handler's time is up, the last chunk still goes (bounded).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
	}
	return w.send(ctx, c)
}

// send publishes c with the next sequence number.
func (w *Writer) send(ctx context.Context, c Chunk) error {
	c.Seq = w.seq
	b, err := frame.Append(w.buf[:0], chunkFrame(w.sid, &c))
	if err != nil {
		return err
	}
	w.buf = b
	ev := &client.Event{}
	ev.Scope, ev.Data, ev.WireSchema = w.to, b, notification.SchemaBytes
	if err := w.s.inf.PublishEvent(ctx, ev); err != nil {
		return err
	}
	w.seq++
	w.done = c.Done
	w.s.st.Chunks.Add(1)
	return nil
}
