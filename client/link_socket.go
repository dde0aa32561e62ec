package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/scope"
)

// socketLink reaches the bus over one RSB socket connection. Its reader
// goroutine decodes each frame once and hands it to the matching local
// sinks; events published here are delivered to the local sinks directly,
// since a socket server never sends a frame back to its sender.
type socketLink struct {
	conn  *rsbsocket.ClientConn
	uri   URI
	bus   *Bus
	sinks dispatcher
	done  chan struct{} // closed when the reader goroutine ends
	// started tells close whether there is a reader goroutine to wait for.
	started bool
}

// dialSocket connects to u and checks the server's handshake.
func dialSocket(ctx context.Context, u URI, cfg rsbsocket.ClientConfig, b *Bus) (*socketLink, error) {
	conn, err := rsbsocket.DialConfig(ctx, u.Addr(), cfg)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &socketLink{conn: conn, uri: u, bus: b, done: make(chan struct{})}, nil
}

// startReader starts the goroutine that receives from the server. It is the
// link's only reader and ends when the connection does.
func (l *socketLink) startReader() {
	l.started = true
	go func() {
		defer close(l.done)
		l.bus.markDead(l.readLoop())
	}()
}

// readLoop receives frames until the connection ends and returns why.
func (l *socketLink) readLoop() error {
	for {
		body, err := l.conn.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, rsbsocket.ErrClosed) || errors.Is(err, net.ErrClosed) {
				return ErrClosed
			}
			return err
		}
		recv := nowMicros()
		l.bus.received.Add(1)
		f, err := rsbsocket.ParseFrame(body)
		if err != nil {
			l.skipMalformed(body, err)
			continue
		}
		if !l.sinks.wants(f.Scope) {
			l.bus.unwanted.Add(1) // an all-events connection gets much it does not need
			continue
		}
		ev, err := notification.DecodeNotification(body)
		if err != nil {
			l.skipMalformed(body, err)
			continue
		}
		l.sinks.deliver(ev, recv)
	}
}

// skipMalformed counts and logs a frame that is not a valid Notification.
func (l *socketLink) skipMalformed(body []byte, err error) {
	l.bus.malformed.Add(1)
	l.bus.log.Debug("client: skipping malformed frame", "len", len(body), "err", err)
}

func (l *socketLink) publish(ctx context.Context, ev *notification.Event) error {
	body, err := notification.Marshal(ev)
	if err != nil {
		return fmt.Errorf("client: publish: %w", err)
	}
	if err := l.conn.Send(body); err != nil {
		if errors.Is(err, rsbsocket.ErrClosed) {
			return fmt.Errorf("%w: %w", ErrClosed, err)
		}
		l.bus.markDead(err)
		return fmt.Errorf("%w: %w", ErrDisconnected, err)
	}
	l.sinks.deliver(ev, nowMicros())
	return nil
}

func (l *socketLink) attach(s sink) func() { return l.sinks.add(s) }

func (l *socketLink) transportURL() string {
	u := l.uri
	u.Scope = scope.Root
	if u.Path == "" {
		return strings.TrimSuffix(u.String(), "/") // socket://host:port, as before
	}
	return u.String() // socket://host:port/?path=PATH
}

// close ends the connection in order and waits for the reader goroutine.
func (l *socketLink) close() error {
	err := l.conn.Close()
	if l.started {
		<-l.done
	}
	if errors.Is(err, rsbsocket.ErrClosed) {
		return nil
	}
	return err
}

// dispatcher is the table of a socket link's local sinks. Delivery reads an
// immutable snapshot without locking; changes copy it.
type dispatcher struct {
	mu   sync.Mutex
	snap atomic.Pointer[[]sinkEntry]
	next uint64
}

type sinkEntry struct {
	id uint64
	s  sink
}

// add registers s and returns the function removing it.
func (d *dispatcher) add(s sink) func() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next++
	id := d.next
	cur := d.load()
	next := make([]sinkEntry, len(cur), len(cur)+1)
	copy(next, cur)
	next = append(next, sinkEntry{id: id, s: s})
	d.snap.Store(&next)
	return func() { d.remove(id) }
}

func (d *dispatcher) remove(id uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := d.load()
	next := make([]sinkEntry, 0, len(cur))
	for _, e := range cur {
		if e.id != id {
			next = append(next, e)
		}
	}
	d.snap.Store(&next)
}

func (d *dispatcher) load() []sinkEntry {
	if p := d.snap.Load(); p != nil {
		return *p
	}
	return nil
}

// wants reports whether some sink's scope contains sc.
func (d *dispatcher) wants(sc scope.Scope) bool {
	for _, e := range d.load() {
		if e.s.sinkScope().Contains(sc) {
			return true
		}
	}
	return false
}

// deliver hands ev to every sink whose scope contains the event's scope.
func (d *dispatcher) deliver(ev *notification.Event, recv int64) {
	for _, e := range d.load() {
		if e.s.sinkScope().Contains(ev.Scope) {
			e.s.deliver(ev, recv)
		}
	}
}
