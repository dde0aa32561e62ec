package sockclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/sockio"
)

// ClientConn is the client side of an RSB socket connection. Send may be
// called concurrently with itself and with Recv; Recv by one goroutine at a
// time.
type ClientConn struct {
	nc  net.Conn
	cfg ClientConfig

	sendMu sync.Mutex
	w      sockio.BatchWriter
	raw    syscall.RawConn // for TrySend; nil: the connection has none
	direct sockio.DirectWriter
	hdr    [frame.HeaderSize]byte // the header of the frame TrySend writes
	// rest is what TrySend left unwritten of a frame it began: the end of
	// hdr and of the body; every later write finishes it first.
	rest net.Buffers

	recvMu sync.Mutex
	r      *bufio.Reader
	sawEOF bool

	closeOnce sync.Once
	closeErr  error
	own       string // key of sockio.NoteOwnClient; "" if none
}

// UnixPrefix marks a Dial address as the path of a Unix domain socket
// ("unix:/run/rsbd.sock") rather than a TCP "host:port".
const UnixPrefix = "unix:"

// Dial connects to an RSB socket server at addr ("host:port", or
// "unix:PATH" for a server listening on a Unix domain socket) and checks
// its handshake. A wrong greeting gives an error wrapping
// frame.ErrBadHandshake.
func Dial(ctx context.Context, addr string) (*ClientConn, error) {
	return DialConfig(ctx, addr, ClientConfig{})
}

// DialConfig is Dial with a configuration.
func DialConfig(ctx context.Context, addr string, cfg ClientConfig) (*ClientConn, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	network, address := SplitAddr(addr)
	nc, err := new(net.Dialer).DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("rsbsocket: dial %s: %w", addr, err)
	}
	sockio.GrowUnixBuffer(nc)
	c, err := newClientConn(ctx, nc, cfg.withDefaults())
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	return c, nil
}

// SplitAddr returns the network ("tcp" or "unix") and the address proper
// of a Dial address.
func SplitAddr(addr string) (network, address string) {
	if path, ok := strings.CutPrefix(addr, UnixPrefix); ok {
		return "unix", path
	}
	return "tcp", addr
}

// NewClientConn wraps an established connection to an RSB socket server
// and reads its handshake. On error nc is left open.
func NewClientConn(ctx context.Context, nc net.Conn, cfg ClientConfig) (*ClientConn, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newClientConn(ctx, nc, cfg.withDefaults())
}

// newClientConn reads the handshake within the context's deadline or
// HandshakeTimeout, whichever comes first.
func newClientConn(ctx context.Context, nc net.Conn, cfg ClientConfig) (*ClientConn, error) {
	deadline := time.Now().Add(cfg.HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetReadDeadline(time.Now()) })
	defer stop()
	if err := nc.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(nc, readBufferSize)
	if err := frame.ReadHandshake(r); err != nil {
		return nil, err
	}
	if !stop() {
		return nil, fmt.Errorf("%w: %w", frame.ErrBadHandshake, ctx.Err())
	}
	if err := nc.SetReadDeadline(time.Time{}); err != nil {
		return nil, err
	}
	c := &ClientConn{nc: nc, cfg: cfg, r: r, own: sockio.NoteOwnClient(nc)}
	if sc, ok := nc.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	return c, nil
}

// LocalAddr returns the local address of the connection.
func (c *ClientConn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// NetConn returns the connection c wraps, for what ClientConn does not
// offer (socket options, a hard close). Reading from it or writing to it
// directly breaks the framing.
func (c *ClientConn) NetConn() net.Conn { return c.nc }

// Send writes one frame carrying body (a serialized Notification) with a
// single write system call, header and body together.
func (c *ClientConn) Send(body []byte) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.finishRest(); err != nil {
		return err
	}
	return closedErr(c.w.WriteOne(c.nc, body))
}

// SendMany writes the frames of bodies in order, coalescing small ones into
// few system calls; each frame stays contiguous. It first finishes a frame
// TrySend began, so SendMany(nil) writes just that.
func (c *ClientConn) SendMany(bodies [][]byte) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.finishRest(); err != nil {
		return err
	}
	for len(bodies) > 0 {
		n, _, err := c.w.WriteSome(c.nc, bodies)
		if err != nil {
			return closedErr(err)
		}
		bodies = bodies[n:]
	}
	return nil
}

// TrySend writes the frame of body if it can without waiting: no other
// write is under way or owed, and the socket takes at least the frame's
// first byte. It reports whether it took the frame, and whether it owes
// the frame's rest: a frame it began and could not finish is written to
// its end first by the next Send or SendMany, which the caller must make.
// When it did not take the frame it wrote nothing of it. It never blocks;
// over a connection that is not a socket (net.Pipe) it takes nothing.
// body must stay unchanged while owed.
func (c *ClientConn) TrySend(body []byte) (taken, owes bool, err error) {
	if c.raw == nil || !c.sendMu.TryLock() {
		return false, false, nil
	}
	defer c.sendMu.Unlock()
	if len(c.rest) > 0 {
		return false, false, nil
	}
	hdr := frame.AppendHeader(c.hdr[:0], len(body))
	n, err := c.direct.Write(c.raw, hdr, body, nil)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return false, false, nil // Send and SendMany report the deadline
	case err != nil:
		return n > 0, false, closedErr(err)
	case n == 0:
		return false, false, nil
	case n < len(hdr):
		c.rest = net.Buffers{hdr[n:], body}
	case n < len(hdr)+len(body):
		c.rest = net.Buffers{body[n-len(hdr):]}
	}
	return true, len(c.rest) > 0, nil
}

// finishRest writes what TrySend left of a frame; it runs under sendMu.
func (c *ClientConn) finishRest() error {
	if len(c.rest) == 0 {
		return nil
	}
	_, err := c.rest.WriteTo(c.nc) // consumes c.rest
	c.rest = nil
	return closedErr(err)
}

// Recv reads the next frame and returns its body in new memory. It returns
// io.EOF once the server has shut down its sending side.
func (c *ClientConn) Recv() ([]byte, error) { return c.RecvInto(nil) }

// RecvInto is Recv reading the body into buf when it fits in buf's
// capacity, else into new memory; it returns the body. A receiver that is
// done with each body before the next call passes the body it got back
// in, so a stream of large frames reuses one buffer instead of allocating
// (and clearing) one per frame.
func (c *ClientConn) RecvInto(buf []byte) ([]byte, error) {
	body, _, err := c.RecvIntoBuffered(buf)
	return body, err
}

// RecvIntoBuffered is RecvInto also reporting whether the frame had begun
// arriving before the call: its first bytes were already read from the
// socket with an earlier frame's (a receiver that stamps receive times
// reads its clock once per read from the socket).
func (c *ClientConn) RecvIntoBuffered(buf []byte) (body []byte, buffered bool, err error) {
	body, buffered, _, err = c.RecvIntoSized(buf, nil)
	return body, buffered, err
}

// RecvIntoSized is RecvIntoBuffered asking get for the memory of a body
// that does not fit in buf, as frame.ReadFrameSized does: a receiver that
// recycles buffers by size hands them out there. It also reports whether
// the next frame has arrived whole already (more), so that the next call
// returns without waiting: a receiver that holds work back for a batch
// does it before it may wait.
func (c *ClientConn) RecvIntoSized(buf []byte, get func(n int) []byte) (body []byte, buffered, more bool, err error) {
	c.recvMu.Lock()
	defer c.recvMu.Unlock()
	buffered = c.r.Buffered() > 0
	body, err = frame.ReadFrameSized(c.r, c.cfg.MaxFrameSize, buf[:0], get)
	if errors.Is(err, io.EOF) {
		c.sawEOF = true
	}
	return body, buffered, err == nil && frame.Buffered(c.r), closedErr(err)
}

// closedErr marks an error from a closed connection with ErrClosed.
func closedErr(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}

// SetReadDeadline sets the deadline of Recv.
func (c *ClientConn) SetReadDeadline(t time.Time) error { return c.nc.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline of Send and SendMany.
func (c *ClientConn) SetWriteDeadline(t time.Time) error { return c.nc.SetWriteDeadline(t) }

// CloseWrite shuts down the sending side (SHUT_WR): the server sees EOF,
// writes what it still has queued for this client and shuts down its side.
func (c *ClientConn) CloseWrite() error {
	if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close ends the connection in order: it shuts down the sending side, reads
// and discards frames until the server's EOF (at most CloseTimeout), then
// closes. A Recv running concurrently returns by the same deadline, or with
// io.EOF, which Close then does not wait for again. Close is idempotent.
func (c *ClientConn) Close() error {
	c.closeOnce.Do(func() {
		_ = c.CloseWrite()
		_ = c.nc.SetReadDeadline(time.Now().Add(c.cfg.CloseTimeout))
		c.recvMu.Lock()
		for !c.sawEOF {
			err := frame.SkipFrame(c.r, c.cfg.MaxFrameSize)
			if errors.Is(err, io.EOF) {
				c.sawEOF = true
			} else if err != nil && !errors.Is(err, frame.ErrEmptyFrame) {
				break
			}
		}
		c.recvMu.Unlock()
		c.closeErr = c.nc.Close()
		sockio.ForgetOwnClient(c.own)
	})
	return c.closeErr
}
