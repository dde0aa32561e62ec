package sockio

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// DirectWriter performs a connection's non-blocking writes. One goroutine
// at a time uses it (a server connection's: the send queue's owner); its
// zero value is ready.
type DirectWriter struct {
	p, q []byte // q follows p in the same writev
	n    int    // bytes of p, then q, written
	err  error
	fn   func(fd uintptr) bool // do, bound once
	iov  [2][]byte
}

// do writes p and q from n on; it never waits for the socket to become
// writable.
func (d *DirectWriter) do(fd uintptr) bool {
	for d.n < len(d.p)+len(d.q) {
		var k int
		var err error
		switch {
		case d.n >= len(d.p):
			k, err = syscall.Write(int(fd), d.q[d.n-len(d.p):])
		case len(d.q) == 0:
			k, err = syscall.Write(int(fd), d.p[d.n:])
		default:
			d.iov[0], d.iov[1] = d.p[d.n:], d.q
			k, err = unix.Writev(int(fd), d.iov[:])
			d.iov = [2][]byte{}
		}
		if k > 0 {
			d.n += k
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return true
		case err != nil:
			d.err = err
			return true
		case k == 0:
			return true
		}
	}
	return true
}

// Write writes what of p, then q, raw's socket takes without blocking and
// returns how much that was. reset, if set, is called once when raw
// refuses the write for a passed deadline; the write is then tried again
// if it returns nil.
func (d *DirectWriter) Write(raw syscall.RawConn, p, q []byte, reset func() error) (int, error) {
	if d.fn == nil {
		d.fn = d.do
	}
	d.p, d.q, d.n, d.err = p, q, 0, nil
	err := raw.Write(d.fn)
	if errors.Is(err, os.ErrDeadlineExceeded) && reset != nil {
		if err = reset(); err == nil {
			err = raw.Write(d.fn)
		}
	}
	if err == nil {
		err = d.err
	}
	n := d.n
	d.p, d.q = nil, nil
	return n, err
}
