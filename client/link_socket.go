package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
)

// socketLink reaches the bus over one RSB socket connection. Its reader
// goroutine decodes each frame once and hands it to the matching local
// sinks; events published here are delivered to the local sinks directly,
// since a socket server never sends a frame back to its sender.
type socketLink struct {
	conn  *sockclient.ClientConn
	send  *sender
	uri   URI
	bus   *Bus
	sinks dispatcher
	slabs *slabPool
	// events holds the events listeners WithoutRetention gave back.
	events *eventStash
	done   chan struct{} // closed when the reader goroutine ends
	// started tells close whether there is a reader goroutine to wait for.
	started bool
	// reader is the reading, once started.
	reader *sockReader
	// det copies what local sinks get of a published event.
	det detacher
}

// dialSocket connects to u and checks the server's handshake.
func dialSocket(ctx context.Context, u URI, cfg sockclient.ClientConfig, b *Bus) (*socketLink, error) {
	conn, err := sockclient.DialConfig(ctx, u.Addr(), cfg)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &socketLink{conn: conn, send: newSender(conn, b.markDead), uri: u, bus: b, slabs: newSlabPool(), events: newEventStash(), done: make(chan struct{})}, nil
}

// startReader starts the goroutine that receives from the server: the
// link's only reader while it reads, which may hand the reading on to
// another goroutine (see sockReader.tryQuick). The reading ends when the
// connection does.
func (l *socketLink) startReader() {
	l.started = true
	rd := &sockReader{l: l, st: readState{events: readerEvents{stash: l.events}}}
	rd.getLarge = rd.takeLarge
	rd.guard.init(rd.takeOver, l.bus.cfg.quickTick)
	l.reader = rd
	go rd.serve()
}

// sockReader is the reading of a socket link: what its loop keeps from
// frame to frame, so that another goroutine can take the loop over.
type sockReader struct {
	l        *socketLink
	st       readState
	cur      *recvSlab // the current slab
	lent     int32     // events lent out of cur (see readerRefs)
	rest     []byte    // its unused rest
	large    *recvSlab // the large slab of the current body, if any
	getLarge func(n int) []byte
	recv     int64 // the receive time of the last read
	guard    quickGuard
}

// takeLarge gives the connection a large slab of n bytes to read a body
// into, or nil.
func (rd *sockReader) takeLarge(n int) []byte {
	if rd.large = rd.l.slabs.getLarge(n); rd.large == nil {
		return nil
	}
	return rd.large.buf[:0]
}

// serve reads on the calling goroutine until the connection ends, then
// ends the reading, unless it handed the reading on to another goroutine
// first.
func (rd *sockReader) serve() {
	err := rd.loop()
	if errors.Is(err, errHandedOn) {
		return
	}
	rd.st.pushes.flush()
	rd.leaveCur()
	rd.l.bus.markDead(err)
	close(rd.l.done)
}

// leaveCur lets the current slab go, if any.
func (rd *sockReader) leaveCur() {
	if rd.cur != nil {
		rd.cur.leave(rd.lent)
		rd.cur, rd.lent = nil, 0
	}
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// loop receives frames until the connection ends and returns why, or
// errHandedOn once another goroutine reads instead.
// Each frame is decoded once, into the Event its participants get (see
// deliverFrame), its data aliasing the frame's body. Bodies are read one
// after the other into a slab (recvSlab) as long as they fit, a larger one
// into a large slab of its own; a slab lives as long as any event of it,
// and one whose events all went to listeners WithoutRetention is reused
// once they gave them back.
//
// The receive time is read once per read from the socket: frames that
// began arriving in the same read share it, the time the first of them
// was returned.
func (rd *sockReader) loop() error {
	l, st := rd.l, &rd.st
	for {
		if cap(rd.rest) < recvSlabMin {
			rd.leaveCur()
			rd.cur = l.slabs.get()
			rd.rest = rd.cur.buf[:0]
		}
		rd.large = nil
		body, buffered, more, err := l.conn.RecvIntoSized(rd.rest, rd.getLarge)
		if err != nil {
			if rd.large != nil {
				rd.large.leave(0)
			}
			if errors.Is(err, io.EOF) || errors.Is(err, sockclient.ErrClosed) || errors.Is(err, net.ErrClosed) {
				return ErrClosed
			}
			return err
		}
		if !buffered || rd.recv == 0 {
			rd.recv = nowMicros()
		}
		var owner *recvSlab // the slab body lies in
		switch {
		case rd.large != nil:
			owner = rd.large
		case len(body) <= cap(rd.rest):
			owner, rd.rest = rd.cur, rd.rest[len(body):len(body)]
		case len(body) <= recvSlabBytes:
			rd.rest = nil // a new slab would have held it: take one for the next
		}
		lent := l.deliverFrame(st, body, owner, rd.recv)
		switch {
		case rd.large != nil:
			rd.large.leave(b2i(lent)) // the reader is done with it
		case lent:
			rd.lent++
		}
		if n := st.pushes.n; n > 0 && (n >= eventBatch || !more) {
			// Before the reader may wait for the socket.
			if !more {
				if armed, ok := rd.tryQuick(); ok {
					if !rd.guard.disarm(armed) {
						return errHandedOn
					}
					continue
				}
			}
			st.pushes.flush()
		}
	}
}

// deliverFrame decodes body, which lies in owner (nil: memory of its own),
// into an event from the pool and hands it to its sinks: lent to a lone
// listener that gives it back (lent is then true, and the reader counts
// the lend against its reference to owner), else marking owner as kept
// (the event then leaves the pool for good). An event no sink wants goes
// back at once.
func (l *socketLink) deliverFrame(st *readState, body []byte, owner *recvSlab, recv int64) (lent bool) {
	l.bus.received.Add(1)
	ev := st.events.get()
	if err := st.dec.DecodeAliasInto(&ev.Event, body); err != nil {
		st.events.put(ev)
		l.skipMalformed(body, err)
		return false
	}
	sinks := &st.sinks
	*sinks = l.sinks.appendMatching((*sinks)[:0], ev.Scope)
	if len(*sinks) == 0 {
		st.events.put(ev)
		l.bus.unwanted.Add(1) // an all-events connection gets much it does not need
		return false
	}
	if owner != nil {
		if lent = lentTo(*sinks); lent {
			ev.slab = owner
		} else {
			owner.kept.Store(true)
		}
	}
	st.deliver(*sinks, item{ev: &ev.Event, own: ev, recv: recv})
	clear(*sinks)
	return lent
}

// deliver is deliverTo holding the events for queued participants in the
// reader's batch of pushes.
func (st *readState) deliver(sinks []sink, it item) {
	if len(sinks) > 1 {
		it.own = nil
	}
	for _, s := range sinks {
		if ls, ok := s.(laterSink); ok {
			ls.deliverLater(it, &st.pushes)
		} else {
			s.deliver(it)
		}
	}
}

// laterSink is a sink whose events a socket link's reader holds in its
// batch of pushes (pushBatch).
type laterSink interface {
	deliverLater(it item, p *pushBatch)
}

// readState is what a socket link's reader reuses from frame to frame.
type readState struct {
	dec    notification.Decoder
	sinks  []sink // the current frame's
	events readerEvents
	pushes pushBatch
}

// skipMalformed counts and logs a frame that is not a valid Notification.
func (l *socketLink) skipMalformed(body []byte, err error) {
	l.bus.malformed.Add(1)
	l.bus.log.Debug("client: skipping malformed frame", "len", len(body), "err", err)
}

// publish encodes ev for the connection, which keeps only the encoding;
// local sinks keep ev itself.
func (l *socketLink) publish(ctx context.Context, ev *notification.Event) (kept bool, err error) {
	if err := l.send.sendEvent(ctx, ev, ev.MetaData.SendTime); err != nil {
		return false, err
	}
	// Local sinks receive the event as it is sent, with data of its own.
	var buf [8]sink
	if sinks := l.sinks.appendMatching(buf[:0], ev.Scope); len(sinks) > 0 {
		l.det.detach(ev)
		deliverTo(sinks, item{ev: ev, recv: ev.MetaData.SendTime})
		return true, nil
	}
	return false, nil
}

func (l *socketLink) flush(ctx context.Context) error { return l.send.flush(ctx) }

func (l *socketLink) attach(s sink) func() { return l.sinks.add(s) }

func (l *socketLink) transportURL() string {
	u := l.uri
	u.Scope = scope.Root
	if u.Path == "" {
		return strings.TrimSuffix(u.String(), "/") // socket://host:port, as before
	}
	return u.String() // socket://host:port/?path=PATH
}

// close writes what the link still holds queued (within
// closeFlushTimeout), ends the connection in order and waits for the
// reader and writer goroutines.
func (l *socketLink) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeFlushTimeout)
	flushErr := l.send.flush(ctx)
	cancel()
	err := l.conn.Close()
	l.send.close()
	if n := l.send.unsentFrames(); flushErr != nil && n > 0 {
		l.bus.log.Warn("client: closed with events never written", "unsent", n)
	}
	if l.started {
		<-l.done
	}
	if errors.Is(err, sockclient.ErrClosed) {
		return nil
	}
	return err
}
