package transport

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"testing"
	"time"
)

// Conn is implemented by Endpoint.
var _ Conn = (*Endpoint)(nil)

func TestMulticastExchange(t *testing.T) {
	t.Parallel()
	g := testGroups(t, 1)
	sa, sb := newSink(), newSink()
	a, b := open(t, Config{}, sa.handle), open(t, Config{}, sb.handle)
	mustJoin(t, a, g...)
	mustJoin(t, b, g...)

	for i := range 10 {
		mustSend(t, a, g, fmt.Appendf(nil, "a%d", i))
	}
	for i := range 10 {
		p := sb.next(t)
		if want := fmt.Sprintf("a%d", i); string(p.Data) != want {
			t.Fatalf("b got %q, want %q", p.Data, want)
		}
		if p.From.Port() != a.LocalAddr().Port() {
			t.Fatalf("from %v, want port %d", p.From, a.LocalAddr().Port())
		}
	}
	mustSend(t, b, g, []byte("from b"))
	if p := sa.next(t); string(p.Data) != "from b" || p.From.Port() != b.LocalAddr().Port() {
		t.Fatalf("a got %q from %v", p.Data, p.From)
	}
	// a's own datagrams came back through the loop and were dropped, not delivered.
	waitStats(t, a, "own datagrams dropped", func(s Stats) bool { return s.Own == 10 })
	if s := a.Stats(); s.Received != 1 || s.Sent != 10 {
		t.Fatalf("a stats %+v", s)
	}
	if len(sa.ch) != 0 {
		t.Fatalf("a received its own datagram")
	}
}

func TestReceiveOwn(t *testing.T) {
	t.Parallel()
	g := testGroups(t, 1)
	s := newSink()
	a := open(t, Config{ReceiveOwn: true}, s.handle)
	mustJoin(t, a, g...)
	mustSend(t, a, g, []byte("echo"))
	if p := s.next(t); string(p.Data) != "echo" || p.From.Port() != a.LocalAddr().Port() {
		t.Fatalf("got %q from %v", p.Data, p.From)
	}
}

// TestJoinLeave proves a left group is no longer received: b keeps a second
// group on the same socket, and a marker sent to it after the datagram to
// the left group arrives first in that socket's FIFO queue.
func TestJoinLeave(t *testing.T) {
	t.Parallel()
	gs := testGroups(t, 2)
	g, keep := gs[:1], gs[1:]
	sb := newSink()
	a, b := open(t, Config{}, func([]Packet) {}), open(t, Config{}, sb.handle)
	mustJoin(t, b, gs...)
	mustJoin(t, b, g...) // joining twice is a no-op
	if s := b.Stats(); s.Groups != 2 || s.Sockets != 2 {
		t.Fatalf("after joins: %+v", s)
	}
	mustSend(t, a, g, []byte("joined"))
	if p := sb.next(t); string(p.Data) != "joined" {
		t.Fatalf("got %q", p.Data)
	}
	if err := b.Leave(g[0]); err != nil {
		t.Fatal(err)
	}
	if err := b.Leave(g[0]); err != nil {
		t.Fatalf("second Leave: %v", err)
	}
	mustSend(t, a, g, []byte("after leave"))
	mustSend(t, a, keep, []byte("marker"))
	if p := sb.next(t); string(p.Data) != "marker" {
		t.Fatalf("got %q after leaving its group", p.Data)
	}
	if err := b.Leave(keep[0]); err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.Groups != 0 || s.Sockets != 1 {
		t.Fatalf("after leaving all: %+v", s)
	}
	mustJoin(t, b, g...) // rejoin opens a fresh socket
	mustSend(t, a, g, []byte("rejoined"))
	if p := sb.next(t); string(p.Data) != "rejoined" {
		t.Fatalf("got %q", p.Data)
	}
}

// TestManyGroups joins 50 groups, more than Linux allows on one socket,
// both by the configured split and by reacting to the kernel's ENOBUFS.
func TestManyGroups(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		perSock int
	}{
		{"split by config", 0},
		{"split on ENOBUFS", 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			gs := testGroups(t, 50)
			sb := newSink()
			a := open(t, Config{}, func([]Packet) {})
			b := open(t, Config{GroupsPerSocket: c.perSock}, sb.handle)
			mustJoin(t, b, gs...)
			if s := b.Stats(); s.Groups != 50 || s.Sockets != 1+3 {
				t.Fatalf("after 50 joins: %+v", s)
			}
			seen := map[string]int{}
			for round := range 2 {
				for i, g := range gs {
					mustSend(t, a, []netip.AddrPort{g}, fmt.Appendf(nil, "%d/%d", round, i))
				}
				for range gs {
					p := sb.next(t)
					if seen[string(p.Data)]++; seen[string(p.Data)] > 1 {
						t.Fatalf("%q received twice: a socket got another socket's group", p.Data)
					}
				}
			}
			if len(seen) != 100 {
				t.Fatalf("%d distinct datagrams, want 100", len(seen))
			}
			for _, g := range gs {
				if err := b.Leave(g); err != nil {
					t.Fatal(err)
				}
			}
			if s := b.Stats(); s.Groups != 0 || s.Sockets != 1 {
				t.Fatalf("after leaving: %+v", s)
			}
		})
	}
}

func TestUnicast(t *testing.T) {
	t.Parallel()
	sb, sc := newSink(), newSink()
	a := open(t, Config{}, func([]Packet) {})
	b, c := open(t, Config{}, sb.handle), open(t, Config{}, sc.handle)
	dst := []netip.AddrPort{unicastAddr(b), unicastAddr(c)}
	var bufs [][]byte
	for i := range 5 {
		bufs = append(bufs, fmt.Appendf(nil, "u%d", i))
	}
	mustSend(t, a, dst, bufs...)
	for _, s := range []*sink{sb, sc} {
		for i := range 5 {
			p := s.next(t)
			if string(p.Data) != fmt.Sprintf("u%d", i) || p.From != unicastAddr(a) {
				t.Fatalf("got %q from %v", p.Data, p.From)
			}
		}
	}
	if s := a.Stats(); s.Sent != 10 || s.SendErrors != 0 {
		t.Fatalf("a stats %+v", s)
	}
}

// TestBatching sends 500 datagrams in one call and receives them in order,
// batched and one system call per datagram.
func TestBatching(t *testing.T) {
	t.Parallel()
	for _, batch := range []int{1, 7, 0} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			t.Parallel()
			g := testGroups(t, 1)
			cfg := Config{ReadBatch: batch, WriteBatch: batch}
			sb := newSink()
			var batches, most int
			count := func(p []Packet) {
				batches++
				most = max(most, len(p))
				sb.handle(p)
			}
			a, b := open(t, cfg, func([]Packet) {}), open(t, cfg, count)
			mustJoin(t, b, g...)
			const n = 500
			bufs := make([][]byte, n)
			for i := range bufs {
				bufs[i] = fmt.Appendf(nil, "datagram %d", i)
			}
			mustSend(t, a, g, bufs...)
			for i := range n {
				if p := sb.next(t); string(p.Data) != string(bufs[i]) {
					t.Fatalf("datagram %d: got %q", i, p.Data)
				}
			}
			want := max(batch, 1)
			if batch == 0 {
				want = DefaultBatch
			}
			if err := b.Close(); err != nil { // orders the reads of batches and most
				t.Fatal(err)
			}
			if most > want {
				t.Fatalf("a batch of %d datagrams, more than %d", most, want)
			}
			t.Logf("%d datagrams in %d handler calls, largest %d", n, batches, most)
		})
	}
}

func TestCloseUnblocksReaders(t *testing.T) {
	t.Parallel()
	gs := testGroups(t, 30)
	e, err := Open(Config{Logger: quiet}, func([]Packet) {})
	if err != nil {
		t.Fatal(err)
	}
	mustJoin(t, e, gs...)
	done := make(chan error, 1)
	go func() { done <- e.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(timeout):
		t.Fatal("Close did not return: a reader is still blocked")
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := e.Send(gs[:1], []byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after Close: %v", err)
	}
	if err := e.Join(gs[0]); !errors.Is(err, ErrClosed) {
		t.Fatalf("Join after Close: %v", err)
	}
	if err := e.Leave(gs[0]); !errors.Is(err, ErrClosed) {
		t.Fatalf("Leave after Close: %v", err)
	}
	if s := e.Stats(); s.Sockets != 0 {
		t.Fatalf("stats after Close: %+v", s)
	}
}

func TestOversizeDropped(t *testing.T) {
	t.Parallel()
	sb := newSink()
	a := open(t, Config{MaxDatagram: 3000}, func([]Packet) {})
	b := open(t, Config{MaxDatagram: 1000}, sb.handle)
	dst := []netip.AddrPort{unicastAddr(b)}
	mustSend(t, a, dst, make([]byte, 1001), make([]byte, 2999), []byte("fits"))
	if p := sb.next(t); string(p.Data) != "fits" {
		t.Fatalf("got %d bytes", len(p.Data))
	}
	if s := b.Stats(); s.Oversize != 2 || s.Received != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestSendAndJoinValidate(t *testing.T) {
	t.Parallel()
	e := open(t, Config{}, func([]Packet) {})
	ok := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:9")}
	if err := e.Send(ok, make([]byte, DefaultMaxDatagram+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversize Send: %v", err)
	}
	for _, bad := range []string{"[::1]:9", "127.0.0.1:0", "0.0.0.0:9"} {
		if err := e.Send([]netip.AddrPort{netip.MustParseAddrPort(bad)}, []byte("x")); !errors.Is(err, ErrAddress) {
			t.Errorf("Send to %s: %v", bad, err)
		}
	}
	for _, bad := range []string{"127.0.0.1:9", "239.255.1.1:0", "[ff02::1]:9"} {
		if err := e.Join(netip.MustParseAddrPort(bad)); !errors.Is(err, ErrAddress) {
			t.Errorf("Join %s: %v", bad, err)
		}
	}
	mapped := netip.AddrPortFrom(netip.AddrFrom16(netip.MustParseAddr("127.0.0.1").As16()), 9)
	if err := e.Send([]netip.AddrPort{mapped}, []byte("x")); err != nil {
		t.Fatalf("Send to an IPv4-mapped address: %v", err)
	}
}

func TestTooManyGroups(t *testing.T) {
	t.Parallel()
	gs := testGroups(t, 3)
	e := open(t, Config{MaxGroups: 2}, func([]Packet) {})
	mustJoin(t, e, gs[:2]...)
	if err := e.Join(gs[2]); !errors.Is(err, ErrTooManyGroups) {
		t.Fatalf("third Join: %v", err)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	d := DefaultConfig()
	if d.TTL != DefaultTTL || d.MaxDatagram != DefaultMaxDatagram || d.ReadBatch != DefaultBatch ||
		d.SocketBuffer != DefaultSocketBuffer || d.GroupsPerSocket != DefaultGroupsPerSocket ||
		d.SpinWait != DefaultSpinWait || d.Logger == nil || d.Listen.Port() != 0 {
		t.Fatalf("DefaultConfig %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("DefaultConfig invalid: %v", err)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero Config invalid: %v", err)
	}
	for name, c := range map[string]Config{
		"ttl":         {TTL: 256},
		"negative":    {ReadBatch: -1},
		"datagram":    {MaxDatagram: 70000},
		"tiny":        {MaxDatagram: 10},
		"batch":       {WriteBatch: MaxBatch + 1},
		"ipv6 listen": {Listen: netip.MustParseAddrPort("[::1]:0")},
		"spin":        {SpinWait: MaxSpinWait + 1},
	} {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Validate = %v", name, err)
		}
		if _, err := Open(c, func([]Packet) {}); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Open = %v", name, err)
		}
	}
	if _, err := Open(Config{}, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("nil handler: %v", err)
	}
	if _, err := Open(Config{Interface: "no-such-if0"}, func([]Packet) {}); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown interface: %v", err)
	}
}

func TestSocketBuffers(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("granted buffer sizes are read on Linux only")
	}
	e := open(t, Config{}, func([]Packet) {})
	s := e.Stats()
	t.Logf("granted SO_RCVBUF %d, SO_SNDBUF %d (requested %d)", s.RecvBuffer, s.SendBuffer, DefaultSocketBuffer)
	if s.RecvBuffer < 256<<10 || s.SendBuffer < 256<<10 {
		t.Fatalf("socket buffers not raised: %+v", s)
	}
}
