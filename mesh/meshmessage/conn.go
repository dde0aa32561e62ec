package meshmessage

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh"
)

// conn is one client: a reader goroutine handling its Packages and a
// writer goroutine draining its bounded queue. Requests to the server run
// on goroutines of their own, at most MaxRequests at once.
type conn struct {
	s  *Server
	nc net.Conn
	// ctx ends when the connection ends or the Server closes, and with it
	// the connection's requests in flight.
	ctx    context.Context
	cancel context.CancelFunc
	// out is the send queue; done closes when the connection ends.
	out  chan queued
	done chan struct{}
	once sync.Once
	// listening is set by LISTEN_REQUEST: events flow only after it.
	listening atomic.Bool
	// greeted is set by a successful HELLO; grant is the token's grant
	// then (nil: no tokens required).
	greeted atomic.Bool
	grant   atomic.Pointer[mesh.Grant]
	// calls bounds the REQUEST_TO_SERVER calls in flight.
	calls chan struct{}
	// seq numbers the REQUEST_TO_CLIENT Packages.
	seq atomic.Uint64

	mu sync.Mutex
	// subs are the listeners of the ASYNC and BROADCAST subscriptions,
	// servers the RSB servers of the SYNC ones, by topic.
	subs    map[string]*client.Listener
	servers map[string]*client.LocalServer
	// pending are the REQUEST_TO_CLIENT waiting for their response, by
	// seq.
	pending map[string]chan *Package
}

// queued is a Package in a connection's send queue; last marks the
// Package after which the writer ends the connection.
type queued struct {
	p    *Package
	last bool
}

// newConn returns the state of a new connection.
func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{s: s, nc: nc, out: make(chan queued, s.cfg.QueueLen),
		done: make(chan struct{}), calls: make(chan struct{}, s.cfg.MaxRequests),
		subs: make(map[string]*client.Listener), servers: make(map[string]*client.LocalServer),
		pending: make(map[string]chan *Package)}
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	return c
}

// end closes the connection and its subscriptions, once, counting why
// the listener closed it (reason "": the client went).
func (c *conn) end(reason string) {
	c.once.Do(func() {
		if reason != "" {
			c.s.st.Closed(reason)
		}
		close(c.done)
		c.cancel()
		_ = c.nc.Close()
		c.mu.Lock()
		subs, servers := c.subs, c.servers
		c.subs, c.servers = nil, nil
		c.mu.Unlock()
		for _, l := range subs {
			_ = l.Close()
		}
		c.s.st.AddSubscribers(-int64(len(subs)))
		for _, srv := range servers {
			_ = srv.Close()
		}
		c.s.drop(c)
	})
}

// ended reports whether the connection has ended.
func (c *conn) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// goodbye sends SERVER_GOODBYE_REQUEST ahead of anything queued and ends
// the connection.
func (c *conn) goodbye() {
	c.writeNow(&Package{Header: Header{Command: ServerGoodbyeRequest}})
	c.end(CloseShutdown)
}

// writeNow writes p at once, ahead of the queue, for the last Package of
// a connection. A net.Conn (and a tls.Conn) writes each call whole, so it
// never splits a Package the writer goroutine is writing.
func (c *conn) writeNow(p *Package) {
	if b, err := Marshal(p); err == nil {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
		_, _ = c.nc.Write(b)
	}
}

// farewell queues p as the connection's last Package: the writer writes
// what is queued before it, then p, and ends the connection. With the
// queue full, p goes out at once.
func (c *conn) farewell(p *Package) {
	if !c.enqueue(queued{p: p, last: true}) {
		c.writeNow(p)
		c.end(CloseGoodbye)
	}
}

// send queues p; false if the queue is full or the connection ended.
func (c *conn) send(p *Package) bool { return c.enqueue(queued{p: p}) }

// enqueue queues q; false if the queue is full or the connection ended.
func (c *conn) enqueue(q queued) bool {
	if c.ended() {
		return false
	}
	select {
	case c.out <- q:
		return true
	default:
		return false
	}
}

// reply queues a response to req: code 0, or the code and description
// of err (see failure).
func (c *conn) reply(req *Package, cmd Command, err error) {
	h := Header{Command: cmd, Seq: req.Header.Seq}
	if err != nil {
		h.Code, h.Desc = failure(err)
	}
	c.send(&Package{Header: h})
}

// writeLoop writes the queued Packages until the connection ends; a write
// past WriteTimeout closes the connection as a slow consumer.
func (c *conn) writeLoop() {
	defer c.s.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case q := <-c.out:
			if q.last {
				c.writeNow(q.p)
				c.end(CloseGoodbye)
				return
			}
			b, err := Marshal(q.p)
			if err != nil {
				c.s.st.AddDropped(DropUnmappable, 1)
				continue
			}
			_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
			if _, err := c.nc.Write(b); err != nil {
				reason := ""
				if errors.Is(err, os.ErrDeadlineExceeded) {
					reason = CloseSlow
					c.s.log.Info("meshmessage: closing a slow client", "remote", c.nc.RemoteAddr())
				}
				c.end(reason)
				return
			}
		}
	}
}

// readLoop handles the client's Packages until it leaves, falls silent
// past the heartbeat timeout or sends one that does not decode.
func (c *conn) readLoop() {
	defer c.s.wg.Done()
	// The buffer lets one read system call take a Package's prefix and
	// the rest, or several small Packages.
	r := bufio.NewReaderSize(c.nc, readBuffer)
	for {
		_ = c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.HeartbeatTimeout))
		p, err := Read(r)
		if err != nil {
			c.end(c.readFailed(err))
			return
		}
		if !c.handle(p) {
			return
		}
	}
}

// readFailed counts and logs why reading a Package failed and returns the
// reason to close the connection for ("" when the client went).
func (c *conn) readFailed(err error) string {
	switch {
	case c.ended():
		return ""
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.s.log.Info("meshmessage: client silent past the heartbeat timeout", "remote", c.nc.RemoteAddr())
		return CloseHeartbeat
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return ""
	}
	reason := decodeReason(err)
	if reason == "" {
		c.s.log.Debug("meshmessage: reading from a client failed", "remote", c.nc.RemoteAddr(), "err", err)
		return "" // a connection error: reset, or a failed TLS handshake
	}
	c.s.st.Reject(reason)
	c.s.log.Info("meshmessage: closing a client for a bad Package", "remote", c.nc.RemoteAddr(), "err", err)
	return CloseBadPackage
}

// decodeReason returns the refusal reason of a codec error, "" for an
// error of the connection.
func decodeReason(err error) string {
	for _, r := range []struct {
		err    error
		reason string
	}{{ErrBadMagic, RejectBadMagic}, {ErrBadVersion, RejectBadVersion}, {ErrTooLarge, RejectTooLarge},
		{ErrTruncated, RejectTruncated}, {ErrBadLength, RejectBadLength}, {ErrBadHeader, RejectBadHeader}} {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return ""
}
