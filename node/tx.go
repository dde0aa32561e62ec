package node

import (
	"net/netip"
	"slices"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

// txBuffer encodes datagrams into one arena and groups consecutive ones with
// the same destinations into one Send (one sendmmsg per run).
type txBuffer struct {
	arena      []byte
	bufs       [][]byte
	dst        []netip.AddrPort
	dstScratch []netip.AddrPort
	peers      []group.PeerAddr
	m          *metrics.Metrics
}

func (t *txBuffer) reset() {
	t.arena = t.arena[:0]
	t.bufs = t.bufs[:0]
	t.dst = t.dst[:0]
}

// encode appends d to the arena and returns its bytes. When the arena
// grows, earlier slices keep pointing into the old array, which is never
// written again, so they stay valid until reset.
func (t *txBuffer) encode(d *datagram.Datagram) ([]byte, error) {
	start := len(t.arena)
	b, err := datagram.Append(t.arena, d)
	if err != nil {
		return nil, err
	}
	t.arena = b
	return b[start:], nil
}

func (t *txBuffer) sameDst(dst []netip.AddrPort) bool {
	return len(t.bufs) > 0 && slices.Equal(t.dst, dst)
}

func (t *txBuffer) setDst(dst []netip.AddrPort) {
	t.dst = append(t.dst[:0], dst...)
}

// send writes the buffered run to its destinations.
func (t *txBuffer) send(c transport.Conn) {
	if len(t.bufs) == 0 {
		return
	}
	if err := c.Send(t.dst, t.bufs...); err != nil && t.m != nil {
		t.m.Drop(metrics.DropSendError)
	}
	t.bufs = t.bufs[:0]
}
