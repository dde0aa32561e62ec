package grpcbus

import (
	"context"
	"sync"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/grpcbuspb"
)

// outFrame is a frame waiting to be sent and the user infos it carries: a
// Message's payload (isMsg), or another frame.
type outFrame struct {
	fr      *grpcbuspb.TransportFrame
	payload []byte
	infos   []notification.UserInfo
	isMsg   bool
}

// sender sends a stream's ordered frames (Message, Headers, HalfClose,
// Trailers) within the peer's window. A Message finding the window spent,
// or frames already waiting, waits in buf; frames go out in the order they
// were given. buf holds at most max messages: past it send blocks.
type sender struct {
	s *stream
	// pubMu is held while frames are published, so that the direct path
	// of send and the flusher never interleave.
	pubMu sync.Mutex
	seq   uint64 // last stream_sequence sent, under pubMu

	mu      sync.Mutex
	credits int
	granted uint64 // highest cumulative grant a numbered WindowUpdate carried
	buf     []outFrame
	msgs    int // messages in buf
	max     int

	room chan struct{} // signalled when buf shrinks
	kick chan struct{} // signalled when credits grow
}

func newSender(s *stream, credits, max int) *sender {
	return &sender{s: s, credits: credits, max: max, room: make(chan struct{}, 1), kick: make(chan struct{}, 1)}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// send sends of at once when nothing waits and the window allows, and
// queues it otherwise; it blocks while max messages wait.
func (q *sender) send(ctx context.Context, of outFrame) error {
	for {
		q.pubMu.Lock()
		q.mu.Lock()
		if len(q.buf) == 0 && (!of.isMsg || q.credits > 0) {
			if of.isMsg {
				q.credits--
			}
			q.mu.Unlock()
			err := q.publish(ctx, of)
			q.pubMu.Unlock()
			return err
		}
		if !of.isMsg || q.msgs < q.max {
			if of.isMsg && q.msgs == 0 {
				q.s.ep.met.stall()
			}
			q.push(of)
			q.mu.Unlock()
			q.pubMu.Unlock()
			return nil
		}
		q.mu.Unlock()
		q.pubMu.Unlock()
		if err := q.waitRoom(ctx); err != nil {
			return err
		}
	}
}

func (q *sender) push(of outFrame) {
	q.buf = append(q.buf, of)
	if of.isMsg {
		q.msgs++
	}
}

// waitRoom waits until buf shrinks, the stream ends or ctx is done.
func (q *sender) waitRoom(ctx context.Context) error {
	select {
	case <-q.room:
		return nil
	case <-q.s.done:
		return q.s.err()
	case <-ctx.Done():
		return ctxStatus(ctx)
	}
}

// grant adds the credits of a WindowUpdate and wakes the flusher. A
// numbered update (cum, the peer's cumulative grant, non-zero) adds what
// it grants beyond the highest one seen, so a repeat or an overtaken
// update adds nothing and is dropped and counted; an unnumbered one (a
// peer speaking only the draft) adds delta.
func (q *sender) grant(delta uint32, cum uint64) {
	q.mu.Lock()
	add := int(delta)
	if cum != 0 {
		if cum <= q.granted {
			q.mu.Unlock()
			q.s.ep.met.drop(dropDuplicate)
			return
		}
		add = int(min(cum-q.granted, maxWindow))
		q.granted = cum
	}
	q.credits += add
	q.mu.Unlock()
	signal(q.kick)
}

// run sends waiting frames as credits arrive, until the stream ends.
func (q *sender) run() {
	for {
		select {
		case <-q.kick:
			q.flush()
		case <-q.s.done:
			return
		}
	}
}

// flush sends the waiting frames the window allows, in order.
func (q *sender) flush() {
	q.pubMu.Lock()
	defer q.pubMu.Unlock()
	for {
		q.mu.Lock()
		if len(q.buf) == 0 || (q.buf[0].isMsg && q.credits == 0) {
			q.mu.Unlock()
			break
		}
		of := q.buf[0]
		q.buf[0] = outFrame{}
		q.buf = q.buf[1:]
		if of.isMsg {
			q.credits--
			q.msgs--
		}
		q.mu.Unlock()
		if err := q.publish(q.s.ep.ctx, of); err != nil {
			q.s.abort(codeOf(err), "sending failed: "+err.Error(), false)
			return
		}
		signal(q.room)
	}
}

// publish numbers a Message and sends the frame to the peer.
func (q *sender) publish(ctx context.Context, of outFrame) error {
	if of.isMsg {
		q.seq++
		return q.s.sendMessage(ctx, q.seq, of.payload)
	}
	return q.s.sendFrame(ctx, of.fr, of.infos)
}

// waitDrained waits until every queued frame is sent or the stream ends.
func (q *sender) waitDrained(ctx context.Context) error {
	for {
		q.mu.Lock()
		empty := len(q.buf) == 0
		q.mu.Unlock()
		if empty {
			return nil
		}
		if err := q.waitRoom(ctx); err != nil {
			return err
		}
	}
}
