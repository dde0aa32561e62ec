package transport

import (
	"errors"
	"net"
	"net/netip"
	"slices"
	"time"

	"golang.org/x/net/ipv4"
)

// reader is the receive loop of one socket. It owns its buffers; the
// Handler sees them only for the duration of a call.
type reader struct {
	e      *Endpoint
	s      *sock
	ms     []ipv4.Message
	from   []netip.AddrPort
	pkts   []Packet
	errors uint64
	spin   spinner
	// batch reads batches without allocating, where it exists (Linux).
	batch *batchReader
}

func newReader(e *Endpoint, s *sock) *reader {
	n := e.cfg.ReadBatch
	r := &reader{e: e, s: s, ms: make([]ipv4.Message, n), from: make([]netip.AddrPort, n),
		pkts: make([]Packet, 0, n)}
	// One allocation for all buffers; +1 byte detects oversize datagrams.
	size := e.cfg.MaxDatagram + 1
	data := make([]byte, n*size)
	oob := make([]byte, n*oobSize)
	for i := range r.ms {
		r.ms[i].Buffers = [][]byte{data[i*size : (i+1)*size : (i+1)*size]}
		r.ms[i].OOB = oob[i*oobSize : (i+1)*oobSize : (i+1)*oobSize]
	}
	r.spin.limit, r.spin.st = max(e.cfg.SpinWait, 0), &e.stats
	r.spin.gate = &e.spinGate
	if rc, err := s.conn.SyscallConn(); err == nil {
		r.spin.rc = rc
		if n > 1 {
			r.batch = newBatchReader(rc, r.ms)
		}
	}
	return r
}

// run reads until the socket is closed: its only exit.
func (r *reader) run() {
	for {
		n, err := r.fill()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			r.e.stats.receiveErrors.Add(1)
			if r.errors++; r.errors%errorLogEvery == 1 {
				r.e.log.Warn("rsbd transport read failed", "local", r.s.conn.LocalAddr(),
					"err", err, "count", r.errors)
			}
			continue
		}
		answers := r.e.answers.Load()
		handed := r.deliver(n)
		switch {
		case r.e.answers.Load() != answers && r.spin.limit > 0:
			r.afterAnswer()
		case handed == 0:
			r.spin.resume() // only own datagrams: the answer is still to come
		default:
			r.spin.until = time.Time{}
		}
	}
}

// fill reads up to len(r.ms) datagrams, with recvmmsg when batching.
func (r *reader) fill() (int, error) {
	if len(r.ms) == 1 {
		m := &r.ms[0]
		n, nn, flags, from, err := r.s.conn.ReadMsgUDPAddrPort(m.Buffers[0], m.OOB)
		m.N, m.NN, m.Flags, r.from[0] = n, nn, flags, from
		return 1, err
	}
	if r.batch != nil {
		return r.batch.fill(r.ms, r.from)
	}
	n, err := r.s.pc.ReadBatch(r.ms, 0)
	for i := range n {
		if a, ok := r.ms[i].Addr.(*net.UDPAddr); ok {
			r.from[i] = a.AddrPort()
		} else {
			r.from[i] = netip.AddrPort{}
		}
	}
	return n, err
}

// deliver filters the n datagrams read and hands the rest to the Handler;
// it returns how many it handed.
func (r *reader) deliver(n int) int {
	e := r.e
	pkts := r.pkts[:0]
	for i := range n {
		m := &r.ms[i]
		if drops, ok := kernelDrops(m.OOB[:m.NN]); ok {
			r.s.drops.Store(drops)
		}
		if m.N > e.cfg.MaxDatagram {
			e.stats.oversize.Add(1)
			continue
		}
		from := netip.AddrPortFrom(r.from[i].Addr().Unmap(), r.from[i].Port())
		if r.s.multicast && !e.cfg.ReceiveOwn && e.isOwn(from) {
			e.stats.own.Add(1)
			continue
		}
		pkts = append(pkts, Packet{Data: m.Buffers[0][:m.N], From: from})
	}
	r.pkts = pkts
	if len(pkts) > 0 {
		e.stats.received.Add(uint64(len(pkts)))
		e.h(pkts)
	}
	return len(pkts)
}

// afterAnswer polls for the answer to the reply the Handler sent, unless
// the batch came from an Endpoint of this process (see endpoints).
func (r *reader) afterAnswer() {
	if r.e.fromProcess(r.pkts) {
		r.e.stats.spinInProcess.Add(1)
		r.spin.until = time.Time{}
		return
	}
	r.spin.wait()
}

// isOwn reports whether a multicast datagram came from this Endpoint.
func (e *Endpoint) isOwn(from netip.AddrPort) bool {
	return from.Port() == e.local.Port() && slices.Contains(e.own, from.Addr())
}
