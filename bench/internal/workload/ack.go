package workload

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync/atomic"
)

// Flow control of windowed throughput runs: the receiver tells the sender
// how many events (warm-up and measured) it has received over a UDP side
// channel on loopback, and the sender keeps at most Window events in flight.
// The channel is outside the system under test, so every system gets the
// same end-to-end flow control.

// Acker is the receiver's end of the side channel. Its zero value sends
// nothing until SetTarget is called.
type Acker struct {
	conn  atomic.Pointer[net.UDPConn]
	every int64
}

// NewAcker returns an Acker that reports every n-th event.
func NewAcker(every int) *Acker { return &Acker{every: int64(max(every, 1))} }

// SetTarget starts reporting to the sender's address.
func (a *Acker) SetTarget(addr string) error {
	ra, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return err
	}
	c, err := net.DialUDP("udp4", nil, ra)
	if err != nil {
		return err
	}
	if old := a.conn.Swap(c); old != nil {
		old.Close()
	}
	return nil
}

// note reports count when it is a multiple of the reporting interval.
func (a *Acker) note(count int64) {
	if a == nil || count%a.every != 0 {
		return
	}
	if c := a.conn.Load(); c != nil {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(count))
		_, _ = c.Write(b[:])
	}
}

// Close releases the channel.
func (a *Acker) Close() {
	if c := a.conn.Swap(nil); c != nil {
		c.Close()
	}
}

// AckEvery is how often a receiver reports for a window: every quarter of
// it, so the sender always has three quarters of a window to send on.
func AckEvery(window int) int { return max(1, window/4) }

// window is the sender's end: it reads the receiver's counts.
type window struct {
	c     *net.UDPConn
	size  int64
	acked atomic.Int64
	kick  chan struct{}
	done  chan struct{}
}

func listenWindow(size int) (*window, error) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	w := &window{c: c, size: int64(size), kick: make(chan struct{}, 1), done: make(chan struct{})}
	go w.loop()
	return w, nil
}

func (w *window) addr() string { return w.c.LocalAddr().String() }

func (w *window) loop() {
	defer close(w.done)
	var b [8]byte
	for {
		n, err := w.c.Read(b[:])
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if n == 8 {
			v := int64(binary.LittleEndian.Uint64(b[:]))
			for cur := w.acked.Load(); v > cur && !w.acked.CompareAndSwap(cur, v); cur = w.acked.Load() {
			}
			select {
			case w.kick <- struct{}{}:
			default:
			}
		}
	}
}

// full reports whether size events are in flight after sent.
func (w *window) full(sent int64) bool { return sent-w.acked.Load() >= w.size }

// wait blocks until fewer than size events are in flight after sent.
func (w *window) wait(ctx context.Context, sent int64) error {
	for w.full(sent) {
		select {
		case <-w.kick:
		case <-ctx.Done():
			return ctx.Err()
		case <-w.done:
			return net.ErrClosed
		}
	}
	return nil
}

func (w *window) close() {
	w.c.Close()
	<-w.done
}
