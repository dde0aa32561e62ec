package engine

import (
	"net/netip"
	"slices"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

// txBuffer encodes datagrams into one arena and groups consecutive ones with
// the same destinations into one Send (one sendmmsg per run). When the
// Conn gathers (transport.GatherConn), the records of DATA datagrams that
// are not tiny are not copied into the arena: a datagram is a list of
// segments (its header and length prefixes in the arena, its records where
// they lie) that the kernel gathers.
type txBuffer struct {
	arena      []byte
	bufs       [][]byte   // whole datagrams (without gather)
	segs       [][]byte   // segments of the run's datagrams (gather)
	vecs       [][][]byte // per datagram of the run, its segments (gather)
	dst        []netip.AddrPort
	dstScratch []netip.AddrPort
	peers      []group.PeerAddr
	m          *metrics.Metrics
}

func (t *txBuffer) reset() {
	t.arena = t.arena[:0]
	t.bufs = t.bufs[:0]
	clear(t.segs) // keep no records alive
	t.segs = t.segs[:0]
	clear(t.vecs)
	t.vecs = t.vecs[:0]
	t.dst = t.dst[:0]
}

// add encodes d into the run: whole into the arena, or with gather as
// segments. When the arena or the segment list grows, earlier slices keep
// pointing into the old arrays, which are never written again, so they
// stay valid until reset.
func (t *txBuffer) add(d *datagram.Datagram, gather bool) error {
	if !gather {
		start := len(t.arena)
		b, err := datagram.Append(t.arena, d)
		if err != nil {
			return err
		}
		t.arena = b
		t.bufs = append(t.bufs, b[start:])
		return nil
	}
	start := len(t.segs)
	var err error
	if gatherRecords(d) {
		t.arena, t.segs, err = datagram.AppendGather(t.arena, t.segs, d)
	} else {
		a := len(t.arena)
		var b []byte
		if b, err = datagram.Append(t.arena, d); err == nil {
			t.arena, t.segs = b, append(t.segs, b[a:])
		}
	}
	if err != nil {
		return err
	}
	t.vecs = append(t.vecs, t.segs[start:len(t.segs):len(t.segs)])
	return nil
}

// gatherRecords reports whether d's records are better gathered than
// copied: a DATA datagram whose records average at least gatherMinRecord
// bytes, within the kernel's segment limit.
func gatherRecords(d *datagram.Datagram) bool {
	if d.Kind != datagram.KindData || datagram.GatherSegments(d) > transport.MaxSegments {
		return false
	}
	return d.RecordBytes() >= gatherMinRecord*d.RecordCount()
}

// pending reports whether the run holds datagrams.
func (t *txBuffer) pending() bool { return len(t.bufs)+len(t.vecs) > 0 }

func (t *txBuffer) sameDst(dst []netip.AddrPort) bool {
	return t.pending() && slices.Equal(t.dst, dst)
}

func (t *txBuffer) setDst(dst []netip.AddrPort) {
	t.dst = append(t.dst[:0], dst...)
}

// send writes the buffered run to its destinations.
func (t *txBuffer) send(c transport.Conn) {
	if !t.pending() {
		return
	}
	var err error
	if len(t.vecs) > 0 {
		err = c.(transport.GatherConn).SendGather(t.dst, t.vecs...)
	} else {
		err = c.Send(t.dst, t.bufs...)
	}
	if err != nil && t.m != nil {
		t.m.Drop(metrics.DropSendError)
	}
	t.bufs = t.bufs[:0]
	t.vecs = t.vecs[:0]
}
