package transport

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/net/ipv4"
)

// sendScratch holds the sendmmsg messages of one Send call; pooled so that
// batched sends do not allocate.
type sendScratch struct {
	ms    []ipv4.Message
	bufs  [][1][]byte
	addrs []net.UDPAddr
	ips   [][4]byte
}

// Send writes every datagram of bufs to every destination of dst from the
// unicast socket, with sendmmsg in batches of WriteBatch when there is more
// than one datagram. A datagram the kernel refuses is counted and skipped;
// Send returns the first such error after attempting all of them.
func (e *Endpoint) Send(dst []netip.AddrPort, bufs ...[]byte) error {
	if e.closed.Load() {
		return ErrClosed
	}
	for _, b := range bufs {
		if len(b) > e.cfg.MaxDatagram {
			return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(b), e.cfg.MaxDatagram)
		}
	}
	for _, d := range dst {
		if _, err := CheckDest(d); err != nil {
			return err
		}
	}
	switch n := len(dst) * len(bufs); {
	case n == 0:
		return nil
	case n == 1 || e.cfg.WriteBatch == 1:
		return e.sendEach(dst, bufs)
	default:
		return e.sendBatch(dst, bufs, nil)
	}
}

// SendGather is Send for datagrams given as lists of segments: each
// datagram is the concatenation of its segments, which the kernel gathers
// (sendmmsg with an iovec per segment), so that the caller need not copy
// them together. A datagram of more than MaxSegments segments is refused.
func (e *Endpoint) SendGather(dst []netip.AddrPort, dgrams ...[][]byte) error {
	if e.closed.Load() {
		return ErrClosed
	}
	for _, segs := range dgrams {
		if len(segs) > MaxSegments {
			return fmt.Errorf("%w: %d segments, limit %d", ErrTooLarge, len(segs), MaxSegments)
		}
		n := 0
		for _, s := range segs {
			n += len(s)
		}
		if n > e.cfg.MaxDatagram {
			return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, e.cfg.MaxDatagram)
		}
	}
	for _, d := range dst {
		if _, err := CheckDest(d); err != nil {
			return err
		}
	}
	if len(dst)*len(dgrams) == 0 {
		return nil
	}
	return e.sendBatch(dst, nil, dgrams)
}

// sendEach writes the datagrams one system call each.
func (e *Endpoint) sendEach(dst []netip.AddrPort, bufs [][]byte) error {
	var first error
	for _, b := range bufs {
		for _, d := range dst {
			_, err := e.uni.conn.WriteToUDPAddrPort(b, netip.AddrPortFrom(d.Addr().Unmap(), d.Port()))
			if err == nil {
				e.stats.sent.Add(1)
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return ErrClosed
			}
			first = e.sendFailed(first, err)
		}
	}
	return first
}

// sendBatch writes the datagrams, bufs or (when bufs is nil) the segment
// lists of gather, WriteBatch per sendmmsg call.
func (e *Endpoint) sendBatch(dst []netip.AddrPort, bufs [][]byte, gather [][][]byte) error {
	sc, _ := e.send.Get().(*sendScratch)
	if sc == nil {
		n := e.cfg.WriteBatch
		sc = &sendScratch{ms: make([]ipv4.Message, n), bufs: make([][1][]byte, n),
			addrs: make([]net.UDPAddr, n), ips: make([][4]byte, n)}
	}
	defer func() {
		clear(sc.bufs) // do not keep the caller's buffers alive
		clear(sc.ms)
		e.send.Put(sc)
	}()
	var first error
	k := 0
	for i := range len(bufs) + len(gather) {
		for _, d := range dst {
			segs := sc.bufs[k][:]
			if bufs != nil {
				sc.bufs[k][0] = bufs[i]
			} else {
				segs = gather[i]
			}
			sc.ips[k] = d.Addr().Unmap().As4()
			sc.addrs[k] = net.UDPAddr{IP: sc.ips[k][:], Port: int(d.Port())}
			sc.ms[k] = ipv4.Message{Buffers: segs, Addr: &sc.addrs[k]}
			if k++; k == len(sc.ms) {
				if err := e.writeAll(sc.ms, &first); err != nil {
					return err
				}
				k = 0
			}
		}
	}
	if k > 0 {
		if err := e.writeAll(sc.ms[:k], &first); err != nil {
			return err
		}
	}
	return first
}

// writeAll writes ms, skipping messages the kernel refuses and recording
// the first error in *first. It returns ErrClosed if the socket is closed.
func (e *Endpoint) writeAll(ms []ipv4.Message, first *error) error {
	for len(ms) > 0 {
		n, err := e.uni.pc.WriteBatch(ms, 0)
		n = max(n, 0) // a failed sendmmsg reports -1
		e.stats.sent.Add(uint64(n))
		ms = ms[n:]
		if err == nil {
			continue
		}
		if errors.Is(err, net.ErrClosed) {
			return ErrClosed
		}
		*first = e.sendFailed(*first, err)
		if len(ms) > 0 {
			ms = ms[1:]
		}
	}
	return nil
}

// sendFailed counts a refused datagram, logs now and then, and keeps the
// first error.
func (e *Endpoint) sendFailed(first, err error) error {
	if n := e.stats.sendErrors.Add(1); n%errorLogEvery == 1 {
		e.log.Warn("rsbd transport send failed", "local", e.local, "err", err, "count", n)
	}
	if first == nil {
		first = fmt.Errorf("transport: send: %w", err)
	}
	return first
}
