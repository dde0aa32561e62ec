package bus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// The raw TCP relay reference: the floor of any broker's round trip. A
// relay process copies bytes between two loopback TCP connections, one of
// a pinger and one of an echo, so a round trip crosses four socket hops
// and four wake-ups (pinger → relay → echo → relay → pinger), like a ping
// through an rsbd daemon or a NATS server, with no protocol work at all.
const (
	// relayBuffer is the read buffer of each relay direction and of the echo.
	relayBuffer = 64 << 10
	// MaxTCPMessage is the largest message a TCPClient sends or accepts.
	MaxTCPMessage = 1 << 20
	// tcpPrefix is the length prefix of a TCPClient's messages.
	tcpPrefix = 4
)

// ErrTCPFrame is returned by TCPClient.RoundTrip for a message over
// MaxTCPMessage, sent or announced by the stream.
var ErrTCPFrame = errors.New("bus: TCP message over the size limit")

// TCPRelay accepts two TCP connections on loopback and copies every byte
// read on one to the other: one goroutine per direction reads and writes
// straight to the other connection (Go's default TCP_NODELAY). It serves
// one pair; connections after the second are closed.
type TCPRelay struct {
	ln     net.Listener
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
	wg     sync.WaitGroup
}

// StartTCPRelay listens on 127.0.0.1 (ephemeral port), or with unix on a
// Unix socket in the temporary directory (removed on Close); Addr names it
// as the dial functions take it.
func StartTCPRelay(unix bool) (*TCPRelay, error) {
	var ln net.Listener
	var err error
	if unix {
		ln, err = net.Listen("unix", filepath.Join(os.TempDir(),
			fmt.Sprintf("rsbd-bench-relay-%d-%d.sock", os.Getpid(), rand.Uint32())))
	} else {
		ln, err = net.Listen("tcp4", "127.0.0.1:0")
	}
	if err != nil {
		return nil, err
	}
	r := &TCPRelay{ln: ln}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// accept pairs the first two connections and starts their copying.
func (r *TCPRelay) accept() {
	defer r.wg.Done()
	var pair []net.Conn
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return // listener closed
		}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			_ = c.Close()
			return
		}
		r.conns = append(r.conns, c)
		r.mu.Unlock()
		if len(pair) == 2 {
			_ = c.Close()
			continue
		}
		if pair = append(pair, c); len(pair) == 2 {
			r.wg.Add(2)
			go r.pipe(pair[0], pair[1])
			go r.pipe(pair[1], pair[0])
		}
	}
}

// pipe copies src to dst until either fails, then closes both so that the
// other direction ends too.
func (r *TCPRelay) pipe(src, dst net.Conn) {
	defer r.wg.Done()
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, relayBuffer)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Addr returns the relay's address.
func (r *TCPRelay) Addr() string {
	if a, ok := r.ln.Addr().(*net.UnixAddr); ok {
		return sockclient.UnixPrefix + a.Name
	}
	return r.ln.Addr().String()
}

// Close stops the relay and closes its connections.
func (r *TCPRelay) Close() error {
	err := r.ln.Close()
	r.mu.Lock()
	r.closed = true
	for _, c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
	return err
}

// dialRelay connects to a relay address: "host:port" or "unix:PATH".
func dialRelay(addr string) (net.Conn, error) {
	network, address := sockclient.SplitAddr(addr)
	return net.DialTimeout(network, address, 5*time.Second)
}

// TCPEcho is the ponging end of the relay reference: it connects to the
// relay and writes back every byte it reads, on the goroutine that read it.
type TCPEcho struct {
	c    net.Conn
	done chan struct{}
}

// StartTCPEcho connects to the relay at addr.
func StartTCPEcho(addr string) (*TCPEcho, error) {
	c, err := dialRelay(addr)
	if err != nil {
		return nil, err
	}
	e := &TCPEcho{c: c, done: make(chan struct{})}
	go e.loop()
	return e, nil
}

func (e *TCPEcho) loop() {
	defer close(e.done)
	buf := make([]byte, relayBuffer)
	for {
		n, err := e.c.Read(buf)
		if n > 0 {
			if _, werr := e.c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Close stops the echo.
func (e *TCPEcho) Close() error {
	err := e.c.Close()
	<-e.done
	return err
}

// TCPClient is the pinging end of the relay reference: each message goes
// out with a 4-byte big-endian length prefix in one write, and RoundTrip
// reads the echoed messages on the calling goroutine, as UDPClient does.
// Bytes of an echo that arrives after its round trip timed out stay
// buffered and are skipped by the next round trip's match.
type TCPClient struct {
	c    net.Conn
	out  []byte // prefix and message being sent
	in   []byte // receive buffer; in[r:w] is unread
	r, w int
}

// DialTCP connects to the relay at addr.
func DialTCP(addr string) (*TCPClient, error) {
	c, err := dialRelay(addr)
	if err != nil {
		return nil, err
	}
	return &TCPClient{c: c, in: make([]byte, relayBuffer)}, nil
}

// RoundTrip sends payload and reads echoed messages until one satisfies
// match (true) or timeout passes (false, nil). One goroutine at a time.
func (t *TCPClient) RoundTrip(payload []byte, timeout time.Duration, match func([]byte) bool) (bool, error) {
	if err := t.c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return false, err
	}
	if err := t.Publish("", payload); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return false, nil
		}
		return false, err
	}
	for {
		msg, ok, err := t.next()
		if err != nil {
			return false, err
		}
		if ok {
			if match(msg) {
				return true, nil
			}
			continue
		}
		if err := t.fill(); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return false, nil
			}
			return false, err
		}
	}
}

// next returns the next whole buffered message, if there is one. The
// message is valid until the next fill.
func (t *TCPClient) next() ([]byte, bool, error) {
	if t.w-t.r < tcpPrefix {
		return nil, false, nil
	}
	n := binary.BigEndian.Uint32(t.in[t.r:])
	if n > MaxTCPMessage {
		return nil, false, fmt.Errorf("%w: %d bytes announced", ErrTCPFrame, n)
	}
	end := t.r + tcpPrefix + int(n)
	if end > t.w {
		return nil, false, nil
	}
	msg := t.in[t.r+tcpPrefix : end]
	t.r = end
	return msg, true, nil
}

// fill moves the unread bytes to the front of the buffer, grows it to
// hold the message being received, and reads once.
func (t *TCPClient) fill() error {
	t.w = copy(t.in, t.in[t.r:t.w])
	t.r = 0
	if t.w >= tcpPrefix {
		// next checked the announced length against MaxTCPMessage.
		if need := tcpPrefix + int(binary.BigEndian.Uint32(t.in)); need > len(t.in) {
			t.in = append(t.in, make([]byte, need-len(t.in))...)
		}
	}
	n, err := t.c.Read(t.in[t.w:])
	t.w += n
	return err
}

// Publish sends payload as one length-prefixed message in one write.
func (t *TCPClient) Publish(_ string, payload []byte) error {
	if len(payload) > MaxTCPMessage {
		return fmt.Errorf("%w: %d bytes", ErrTCPFrame, len(payload))
	}
	t.out = binary.BigEndian.AppendUint32(t.out[:0], uint32(len(payload)))
	t.out = append(t.out, payload...)
	_, err := t.c.Write(t.out)
	return err
}

// Flush does nothing: every Publish is a system call.
func (t *TCPClient) Flush() error { return nil }

// Sync does nothing: every Publish is a system call.
func (t *TCPClient) Sync() error { return nil }

// Subscribe is not supported: replies are read by RoundTrip.
func (t *TCPClient) Subscribe(string, Handler) (func(), error) { return nil, ErrNoSubscribe }

// Close closes the connection.
func (t *TCPClient) Close() error { return t.c.Close() }
