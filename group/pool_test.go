package group

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"

	"github.com/rsbd/rsbd/scope"
)

func TestPoolDefaults(t *testing.T) {
	p, err := NewPool(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Size() != DefaultPoolSize {
		t.Fatalf("Size = %d, want %d", p.Size(), DefaultPoolSize)
	}
	addrs := p.Addrs()
	seen := map[netip.AddrPort]bool{}
	for i, a := range addrs {
		want := netip.AddrPortFrom(netip.AddrFrom4([4]byte{239, 255, 77, byte(i)}), DefaultPoolPort)
		if a != want {
			t.Errorf("Addrs[%d] = %s, want %s", i, a, want)
		}
		seen[a] = true
	}
	// Every group maps into the pool, deterministically, and the mapping
	// spreads groups over all addresses.
	hits := make([]int, p.Size())
	for i := 0; i < 1600; i++ {
		id := ID(scope.MustParse(fmt.Sprintf("/spread/s%d/", i)))
		a := p.Addr(id)
		if !seen[a] || a != p.Addr(id) || a != addrs[p.Index(id)] {
			t.Fatalf("Addr(%x) = %s not stable or not in pool", id, a)
		}
		hits[p.Index(id)]++
	}
	for i, h := range hits {
		if h < 50 || h > 150 { // expected 100 each
			t.Errorf("address %d got %d of 1600 groups", i, h)
		}
	}
}

func TestPoolConfig(t *testing.T) {
	v6 := netip.MustParseAddr("ff15::1:0")
	p, err := NewPool(Config{PoolBase: v6, PoolSize: 300, PoolPort: 9000})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Addrs()[299], netip.MustParseAddrPort("[ff15::1:12b]:9000"); got != want {
		t.Fatalf("last IPv6 address = %s, want %s", got, want)
	}
	mapped, err := NewPool(Config{PoolBase: netip.MustParseAddr("::ffff:239.1.2.3"), PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := mapped.Addrs()[0].Addr(); !got.Is4() || got.String() != "239.1.2.3" {
		t.Fatalf("IPv4-mapped base not unmapped: %s", got)
	}

	bad := []Config{
		{PoolBase: netip.MustParseAddr("10.0.0.1")},
		{PoolBase: netip.MustParseAddr("239.255.255.250"), PoolSize: 16}, // runs past 239.255.255.255
		{PoolBase: netip.MustParseAddr("fe80::1")},
		{PoolBase: netip.MustParseAddr("ff02::1%eth0")},
		{PoolSize: MaxPoolSize + 1},
		{PoolSize: -1},
		{MaxPeers: -1},
		{MaxGroupsPerPeer: MaxEncodedGroups + 1},
	}
	for _, c := range bad {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("Validate(%+v) = %v, want ErrConfig", c, err)
		}
		if _, err := NewPool(c); err == nil {
			t.Errorf("NewPool(%+v) succeeded", c)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	// 239.255.255.240 + 16 ends exactly at 239.255.255.255.
	if err := (Config{PoolBase: netip.MustParseAddr("239.255.255.240")}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestAddrAddOverflow(t *testing.T) {
	if _, ok := addrAdd(netip.MustParseAddr("255.255.255.255"), 1); ok {
		t.Error("IPv4 overflow not detected")
	}
	if _, ok := addrAdd(netip.MustParseAddr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), 1); ok {
		t.Error("IPv6 overflow not detected")
	}
	if a, ok := addrAdd(netip.MustParseAddr("ff02::ff"), 1); !ok || a != netip.MustParseAddr("ff02::100") {
		t.Errorf("IPv6 carry: %s %v", a, ok)
	}
}

func BenchmarkPoolAddr(b *testing.B) {
	p, _ := NewPool(Config{})
	id := ID(scope.MustParse("/robot/arm/"))
	for b.Loop() {
		_ = p.Addr(id)
	}
}
