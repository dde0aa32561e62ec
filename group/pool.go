package group

import (
	"encoding/binary"
	"net/netip"
)

// Pool maps group ids onto a fixed range of multicast addresses. Several
// groups share an address; receivers tell them apart by the group id in each
// datagram header. A Pool is immutable and safe for concurrent use.
type Pool struct {
	addrs []netip.AddrPort
}

// NewPool returns the pool described by cfg (defaults applied), or an error
// wrapping ErrConfig.
func NewPool(cfg Config) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	p := &Pool{addrs: make([]netip.AddrPort, cfg.PoolSize)}
	for i := range p.addrs {
		a, _ := addrAdd(cfg.PoolBase, uint32(i)) // Validate checked the whole range
		p.addrs[i] = netip.AddrPortFrom(a, cfg.PoolPort)
	}
	return p, nil
}

// Size returns the number of addresses in the pool.
func (p *Pool) Size() int { return len(p.addrs) }

// Index returns the position in the pool of the address id maps to.
func (p *Pool) Index(id GroupID) int {
	// The id is an MD5 digest, so any 8 of its bytes are evenly spread.
	return int(binary.BigEndian.Uint64(id[:8]) % uint64(len(p.addrs)))
}

// Addr returns the multicast address and port group id is sent to.
func (p *Pool) Addr(id GroupID) netip.AddrPort {
	return p.addrs[p.Index(id)]
}

// Addrs returns every address of the pool in order, e.g. to join them all.
// The result is a fresh slice the caller owns.
func (p *Pool) Addrs() []netip.AddrPort {
	out := make([]netip.AddrPort, len(p.addrs))
	copy(out, p.addrs)
	return out
}

// addrAdd returns a + n, reporting false when the sum overflows the address
// family or changes its first byte (which would leave the multicast range).
func addrAdd(a netip.Addr, n uint32) (netip.Addr, bool) {
	if a.Is4() {
		b := a.As4()
		v := uint64(binary.BigEndian.Uint32(b[:])) + uint64(n)
		if v > 0xffffffff {
			return netip.Addr{}, false
		}
		binary.BigEndian.PutUint32(b[:], uint32(v))
		return netip.AddrFrom4(b), b[0] == a.As4()[0]
	}
	b := a.As16()
	carry := uint64(n)
	for i := 15; i >= 0 && carry > 0; i-- {
		s := uint64(b[i]) + carry
		b[i] = byte(s)
		carry = s >> 8
	}
	if carry > 0 {
		return netip.Addr{}, false
	}
	return netip.AddrFrom16(b), b[0] == a.As16()[0]
}
