package grpcbus

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/grpcbuspb"
	"github.com/rsbd/rsbd/scope"
)

// inFrame is a received frame that waits for the reader, with the user
// infos of its event: a Message's payload (fr nil), or another frame.
type inFrame struct {
	fr      *grpcbuspb.TransportFrame
	payload []byte
	infos   []notification.UserInfo
}

// stream is the state one side keeps of a streaming call: the inbound
// frames (bounded by the window this side granted), the sender, liveness
// and the end of the call.
type stream struct {
	ep     *endpoint
	id     uint64 // this side's inbound id
	method string
	format string

	// peer, peerAddr and peerID name the other side; set before the first
	// frame is sent.
	peer     scope.Scope
	peerAddr atomic.Pointer[string]
	peerID   uint64

	timeout   time.Duration
	lastHeard atomic.Int64  // unix ns the peer was last heard, as the sweep or a ping saw it
	fresh     atomic.Bool   // a frame came since the sweep last looked
	inSeq     atomic.Uint64 // stream_sequence of the last Message received

	window int // messages this side grants at the handshake
	inbox  *inbox
	snd    *sender

	// onHeaders takes the Headers frame's metadata (client side).
	onHeaders func(md metadata.MD)
	// onFinish runs once when the stream ends, with its final status.
	onFinish func(st *status.Status)

	done chan struct{}
	once sync.Once
	st   *status.Status
}

// newStream makes a stream granting cfg.InitialWindow; the caller adds it
// to the endpoint.
func newStream(ep *endpoint, method, format string, timeout time.Duration) *stream {
	w := ep.cfg.InitialWindow
	s := &stream{ep: ep, method: method, format: format, timeout: timeout, window: w,
		inbox: newInbox(newRecvWindow(w, ep.cfg.MaxWindow, ep.cfg.WindowBytes)), done: make(chan struct{})}
	s.lastHeard.Store(time.Now().UnixNano())
	return s
}

// setPeer names the peer endpoint and its id of the stream, grants credits
// and starts the sender.
func (s *stream) setPeer(peer scope.Scope, id uint64, credits int) {
	s.peer, s.peerID = peer, id
	s.snd = newSender(s, credits, s.ep.cfg.MaxBufferedWrites)
	go s.snd.run()
	// peerAddr last: whoever loads it sees the sender.
	addr := peer.String()
	s.peerAddr.Store(&addr)
}

// isPeer reports whether addr is the peer's endpoint.
func (s *stream) isPeer(addr string) bool {
	p := s.peerAddr.Load()
	return p != nil && *p == addr
}

// silentSince reports whether the peer has been silent past the timeout.
// A frame that came since the last look counts as heard now: frames only
// mark the stream fresh, which costs less than reading the clock for each,
// and the sweep's period is the timeout's granularity anyway.
func (s *stream) silentSince(now time.Time) bool {
	if s.fresh.Swap(false) {
		s.lastHeard.Store(now.UnixNano())
		return false
	}
	return s.timeout > 0 && now.UnixNano()-s.lastHeard.Load() > int64(s.timeout)
}

// onFrame takes a frame for this stream on the delivering goroutine; it
// never blocks. Frames the reader must see in order go to the inbox.
func (s *stream) onFrame(in frameIn, infos []notification.UserInfo) {
	if !s.fresh.Load() {
		s.fresh.Store(true)
	}
	if in.msg {
		if s.inOrder(in.seq) && !s.inbox.putMessage(inFrame{payload: in.payload, infos: infos}, in.seq) {
			s.overflow()
		}
		return
	}
	fr := in.fr
	switch v := fr.Frame.(type) {
	case *grpcbuspb.TransportFrame_WindowUpdate:
		if s.peerAddr.Load() != nil {
			s.snd.grant(v.WindowUpdate.Delta, fr.StreamSequence)
		}
	case *grpcbuspb.TransportFrame_Cancel:
		s.abort(codes.Code(v.Cancel.Status), v.Cancel.Reason, false)
	case *grpcbuspb.TransportFrame_Headers:
		if s.onHeaders != nil {
			s.onHeaders(takeMetadata(infos, prefixHeader))
		}
	default:
		if !s.inbox.putControl(inFrame{fr: fr, infos: infos}) {
			s.overflow()
		}
	}
}

// inOrder reports whether a Message with seq is the next one. A repeated
// one is dropped and counted; a gap means a lost message and ends the
// stream with DATA_LOSS.
func (s *stream) inOrder(seq uint64) bool {
	if s.inSeq.CompareAndSwap(seq-1, seq) {
		return true
	}
	if seq <= s.inSeq.Load() {
		s.ep.met.drop(dropDuplicate)
		return false
	}
	s.abort(codes.DataLoss, "grpcbus: message lost on the bus", true)
	return false
}

// overflow ends a stream whose peer sent past its window.
func (s *stream) overflow() {
	s.ep.met.drop(dropOverflow)
	s.abort(codes.ResourceExhausted, "peer exceeded the flow-control window", true)
}

// next returns the next inbound frame, or the stream's status once it
// ended. Taking a Message grants the peer more credit when the window
// says so; the update's stream_sequence carries the cumulative grant, so
// that a copy the bus repeats grants nothing twice.
func (s *stream) next() (inFrame, error) {
	for {
		in, delta, cum, ok := s.inbox.take()
		if ok {
			if delta > 0 {
				s.grant(delta, cum)
			}
			return in, nil
		}
		select {
		case <-s.inbox.ready:
		case <-s.done:
			if err := s.err(); err != nil {
				return inFrame{}, err
			}
			return inFrame{}, io.EOF
		}
	}
}

// grant sends the peer a WindowUpdate of delta credits, cum in all.
func (s *stream) grant(delta uint32, cum uint64) {
	fr := &grpcbuspb.TransportFrame{StreamSequence: cum, Frame: &grpcbuspb.TransportFrame_WindowUpdate{
		WindowUpdate: &grpcbuspb.WindowUpdate{Delta: delta}}}
	if err := s.sendFrame(s.ep.ctx, fr, nil); err != nil {
		s.abort(codeOf(err), "sending a window update failed: "+err.Error(), false)
	}
}

// sendMessage sends a Message frame with sequence seq and payload p to the
// peer's endpoint, addressed to its stream id.
func (s *stream) sendMessage(ctx context.Context, seq uint64, p []byte) error {
	return s.ep.sendMessage(ctx, s.peer, s.format, s.peerID, seq, p)
}

// sendFrame sends fr to the peer's endpoint, addressed to its stream id.
func (s *stream) sendFrame(ctx context.Context, fr *grpcbuspb.TransportFrame, infos []notification.UserInfo) error {
	fr.StreamId = s.peerID
	return s.ep.sendFrame(ctx, s.peer, s.format, fr, infos)
}

// finish ends the stream once with st: it leaves the endpoint's map and
// wakes everything waiting on it.
func (s *stream) finish(st *status.Status) {
	s.once.Do(func() {
		s.st = st
		// onFinish first: a handler woken by done sees its context ended.
		if s.onFinish != nil {
			s.onFinish(st)
		}
		close(s.done)
		s.ep.remove(s.id)
	})
}

// abort ends the stream with code and msg, telling the peer with a Cancel
// frame when tell is set (without blocking the caller).
func (s *stream) abort(code codes.Code, msg string, tell bool) {
	if tell && s.peerAddr.Load() != nil && !s.ended() {
		fr := &grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_Cancel{
			Cancel: &grpcbuspb.Cancel{Status: uint32(code), Reason: msg}}}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), cancelSendTimeout)
			defer cancel()
			_ = s.sendFrame(ctx, fr, nil)
		}()
	}
	s.finish(status.New(code, msg))
}

func (s *stream) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// err returns the stream's final status as an error (nil for OK).
func (s *stream) err() error {
	<-s.done
	return s.st.Err()
}

// ctxStatus maps a finished context to its gRPC status error.
func ctxStatus(ctx context.Context) error {
	return status.FromContextError(ctx.Err()).Err()
}

// codeOf returns the gRPC code of err: its status's, CANCELLED or
// DEADLINE_EXCEEDED for context errors, UNAVAILABLE otherwise.
func codeOf(err error) codes.Code {
	if st, ok := status.FromError(err); ok {
		return st.Code()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	}
	return codes.Unavailable
}
