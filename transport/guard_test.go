package transport

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/transport/datagram"
)

// captureConn is a Conn that keeps copies of what is sent through it.
type captureConn struct {
	mu   sync.Mutex
	sent [][]byte
}

func (c *captureConn) Send(_ []netip.AddrPort, bufs ...[]byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range bufs {
		c.sent = append(c.sent, bytes.Clone(b))
	}
	return nil
}
func (c *captureConn) Join(netip.AddrPort) error  { return nil }
func (c *captureConn) Leave(netip.AddrPort) error { return nil }
func (c *captureConn) LocalAddr() netip.AddrPort  { return netip.MustParseAddrPort("127.0.0.1:1") }
func (c *captureConn) Close() error               { return nil }

func (c *captureConn) take() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sent
	c.sent = nil
	return s
}

func guardKey(id byte) datagram.Key {
	k := datagram.Key{ID: id}
	k.Secret[0] = id
	return k
}

func guardSealer(t *testing.T, label string, ids ...byte) *datagram.Sealer {
	t.Helper()
	var keys []datagram.Key
	for _, id := range ids {
		keys = append(keys, guardKey(id))
	}
	s, err := datagram.NewSealer(label, keys)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// guardPair is a sending Guard (instance a, member "a") and a receiving
// one (instance b) whose deliveries are recorded.
type guardPair struct {
	tx, rx    *Guard
	wire      *captureConn
	conn      Conn
	recv      Handler
	delivered [][]byte
}

var (
	instA = datagram.InstanceID{0xa}
	instB = datagram.InstanceID{0xb}
)

func newGuardPair(t *testing.T, txSealer, rxSealer *datagram.Sealer, epoch uint64) *guardPair {
	t.Helper()
	p := &guardPair{wire: &captureConn{}}
	var err error
	if p.tx, err = NewGuard(GuardConfig{Sealer: txSealer, Instance: instA, Epoch: epoch}); err != nil {
		t.Fatal(err)
	}
	if p.rx, err = NewGuard(GuardConfig{Sealer: rxSealer, Instance: instB}); err != nil {
		t.Fatal(err)
	}
	p.rx.SetSenders(func(inst datagram.InstanceID) (string, bool) { return "a", inst == instA })
	p.conn = p.tx.Conn(p.wire)
	p.recv = p.rx.Handler(func(batch []Packet) {
		for _, pk := range batch {
			p.delivered = append(p.delivered, bytes.Clone(pk.Data))
		}
	})
	return p
}

func dataDatagram(t *testing.T, inst datagram.InstanceID, seq uint64, body string) []byte {
	t.Helper()
	b, err := datagram.Append(nil, &datagram.Datagram{Kind: datagram.KindData,
		Stream: datagram.StreamKey{Instance: inst, Class: datagram.ReliableOrdered}, Seq: seq,
		Records: [][]byte{[]byte(body)}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// send seals plain through the pair's Conn and returns the sealed bytes.
func (p *guardPair) send(t *testing.T, plain []byte) []byte {
	t.Helper()
	if err := p.conn.Send([]netip.AddrPort{netip.MustParseAddrPort("239.1.1.1:5000")}, plain); err != nil {
		t.Fatal(err)
	}
	s := p.wire.take()
	if len(s) != 1 {
		t.Fatalf("%d datagrams on the wire", len(s))
	}
	return s[0]
}

// deliver hands copies of bufs to the receiving Guard and returns how many
// datagrams got through.
func (p *guardPair) deliver(bufs ...[]byte) int {
	before := len(p.delivered)
	batch := make([]Packet, len(bufs))
	for i, b := range bufs {
		batch[i] = Packet{Data: bytes.Clone(b)}
	}
	p.recv(batch)
	return len(p.delivered) - before
}

func TestGuardSealsAndOpens(t *testing.T) {
	p := newGuardPair(t, guardSealer(t, "l", 1), guardSealer(t, "l", 1), 0)
	plain := dataDatagram(t, instA, 1, "robot arm command")
	sealed := p.send(t, plain)
	if bytes.Contains(sealed, []byte("robot arm command")) {
		t.Fatal("payload in clear on the wire")
	}
	if n := p.deliver(sealed); n != 1 || !bytes.Equal(p.delivered[0], plain) {
		t.Fatalf("%d delivered, %q", n, p.delivered)
	}
	if s := p.rx.Stats(); s.Opened != 1 || p.tx.Stats().Sealed != 1 {
		t.Fatalf("stats %+v / %+v", s, p.tx.Stats())
	}
}

// TestGuardRefuses walks through every attack on a running stream: each
// datagram is refused, counted under its reason, and nothing is delivered.
func TestGuardRefuses(t *testing.T) {
	p := newGuardPair(t, guardSealer(t, "l", 1), guardSealer(t, "l", 1), 100)
	captured := p.send(t, dataDatagram(t, instA, 1, "first"))
	if p.deliver(captured) != 1 {
		t.Fatal("authentic datagram refused")
	}
	// Tampered copies of a datagram not received yet: their counter is
	// fresh, so only authentication can refuse them.
	fresh := p.send(t, dataDatagram(t, instA, 2, "second"))
	flipped := bytes.Clone(fresh)
	flipped[datagram.HeaderSize] ^= 0x10
	forged := bytes.Clone(fresh)
	copy(forged[datagram.HeaderSize:], "forged body, same length as")
	otherLabel := newGuardPair(t, guardSealer(t, "other", 1), guardSealer(t, "other", 1), 101).
		send(t, dataDatagram(t, instA, 2, "other cluster"))
	otherKey := newGuardPair(t, guardSealer(t, "l", 2), guardSealer(t, "l", 2), 100).
		send(t, dataDatagram(t, instA, 2, "unknown key"))
	stranger := datagram.InstanceID{0xee}
	strangerDG := newGuardPair(t, guardSealer(t, "l", 1), guardSealer(t, "l", 1), 100).
		send(t, dataDatagram(t, stranger, 1, "unknown sender"))
	// The sender's previous run: an older epoch, sealed with the right key.
	oldRun := newGuardPair(t, guardSealer(t, "l", 1), guardSealer(t, "l", 1), 99).
		send(t, dataDatagram(t, instA, 9, "old run"))

	cases := []struct {
		name   string
		b      []byte
		reason metrics.DropReason
	}{
		{"replay 1 ms later", captured, metrics.DropReplay},
		{"flipped bit", flipped, metrics.DropAuthFailed},
		{"forged body", forged, metrics.DropAuthFailed},
		{"another label", otherLabel, metrics.DropAuthFailed},
		{"unknown key", otherKey, metrics.DropUnknownKey},
		{"unsealed", dataDatagram(t, instA, 3, "clear"), metrics.DropUnsealed},
		{"unknown sender", strangerDG, metrics.DropUnknownSender},
		{"older run", oldRun, metrics.DropReplay},
		{"garbage", []byte{1, 2, 3}, metrics.DropAuthFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after metrics.DropCounts
			p.rx.Stats().AddDrops(&before)
			if n := p.deliver(c.b); n != 0 {
				t.Fatalf("%d delivered", n)
			}
			p.rx.Stats().AddDrops(&after)
			for r := range metrics.NumDropReasons {
				want := before[r]
				if r == c.reason {
					want++
				}
				if after[r] != want {
					t.Errorf("drops %s: %d, want %d", r, after[r], want)
				}
			}
		})
	}
	// The stream moves on by more than the replay window, as a minute of
	// traffic does; the captured datagram is refused again.
	if p.deliver(fresh) != 1 {
		t.Fatal("authentic datagram refused after tampered copies")
	}
	for i := range datagram.ReplayWindow + 10 {
		if p.deliver(p.send(t, dataDatagram(t, instA, uint64(i+3), "later"))) != 1 {
			t.Fatalf("datagram %d refused", i)
		}
	}
	replays := p.rx.Stats().Replay
	if p.deliver(captured) != 0 || p.rx.Stats().Replay != replays+1 {
		t.Fatal("replay after the window not refused")
	}
}

// TestGuardRotation seals with a new primary while receivers hold both
// keys, then drops the old key: nothing sent in between is refused.
func TestGuardRotation(t *testing.T) {
	p := newGuardPair(t, guardSealer(t, "l", 1), guardSealer(t, "l", 1), 0)
	seq := uint64(0)
	check := func(step string, want int) {
		t.Helper()
		seq++
		if n := p.deliver(p.send(t, dataDatagram(t, instA, seq, step))); n != want {
			t.Fatalf("%s: %d delivered, want %d", step, n, want)
		}
	}
	check("before", 1)
	p.rx.SetSealer(guardSealer(t, "l", 1, 2)) // add the new key everywhere
	p.tx.SetSealer(guardSealer(t, "l", 1, 2))
	check("added", 1)
	p.rx.SetSealer(guardSealer(t, "l", 2, 1)) // make it primary
	p.tx.SetSealer(guardSealer(t, "l", 2, 1))
	check("primary", 1)
	p.rx.SetSealer(guardSealer(t, "l", 2)) // remove the old one
	p.tx.SetSealer(guardSealer(t, "l", 2))
	check("removed", 1)
	p.tx.SetSealer(guardSealer(t, "l", 1)) // a sender still on the old key
	check("old key", 0)
	if s := p.rx.Stats(); s.UnknownKey != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestGuardForgetAndSenders(t *testing.T) {
	p := newGuardPair(t, guardSealer(t, "l", 1), guardSealer(t, "l", 1), 0)
	b := p.send(t, dataDatagram(t, instA, 1, "x"))
	p.rx.SetSenders(func(datagram.InstanceID) (string, bool) { return "", false })
	if p.deliver(b) != 0 {
		t.Fatal("delivered from an instance no member runs")
	}
	p.rx.SetSenders(func(inst datagram.InstanceID) (string, bool) { return "a", inst == instA })
	if p.deliver(b) != 1 {
		t.Fatal("refused once the member is known")
	}
	p.rx.Forget("a", instA)
	if p.deliver(b) != 1 {
		t.Fatal("state kept after Forget")
	}
	if _, err := NewGuard(GuardConfig{}); !errors.Is(err, ErrNoSealer) {
		t.Fatalf("NewGuard without sealer: %v", err)
	}
}

func TestGuardOwnAndTooLarge(t *testing.T) {
	s := guardSealer(t, "l", 1)
	g, err := NewGuard(GuardConfig{Sealer: s, Instance: instA})
	if err != nil {
		t.Fatal(err)
	}
	wire := &captureConn{}
	c := g.Conn(wire)
	dst := []netip.AddrPort{netip.MustParseAddrPort("239.1.1.1:5000")}
	if err := c.Send(dst, dataDatagram(t, instA, 1, "own")); err != nil {
		t.Fatal(err)
	}
	var n int
	g.Handler(func(b []Packet) { n += len(b) })([]Packet{{Data: wire.take()[0]}})
	if n != 0 || g.Stats().Own != 1 {
		t.Fatalf("own datagram: %d delivered, stats %+v", n, g.Stats())
	}
	big := dataDatagram(t, instA, 1, string(make([]byte, datagram.MaxDatagramSize-datagram.HeaderSize-10)))
	if err := c.Send(dst, big, dataDatagram(t, instA, 2, "ok")); !errors.Is(err, datagram.ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	if len(wire.take()) != 1 || g.Stats().SealErrors != 1 {
		t.Fatalf("stats %+v", g.Stats())
	}
}

// BenchmarkGuard measures sealing a datagram through a Guard's Conn and
// opening it through its Handler, for datagrams of one 64 B and one 1 KiB
// record and for a full loopback datagram (60000 bytes).
func BenchmarkGuard(b *testing.B) {
	s, _ := datagram.NewSealer("bench", []datagram.Key{guardKey(1)})
	for _, size := range []int{64, 1 << 10, 60000 - datagram.HeaderSize - 6 - datagram.SealOverhead} {
		b.Run(fmt.Sprintf("record=%d", size), func(b *testing.B) {
			tx, _ := NewGuard(GuardConfig{Sealer: s, Instance: instA})
			rx, _ := NewGuard(GuardConfig{Sealer: s, Instance: instB})
			rx.SetSenders(func(datagram.InstanceID) (string, bool) { return "a", true })
			var last []byte
			c := tx.Conn(connFunc(func(bufs [][]byte) { last = append(last[:0], bufs[0]...) }))
			h := rx.Handler(func([]Packet) {})
			plain, _ := datagram.Append(nil, &datagram.Datagram{Kind: datagram.KindData,
				Stream: datagram.StreamKey{Instance: instA}, Seq: 1, Records: [][]byte{make([]byte, size)}})
			dst := []netip.AddrPort{netip.MustParseAddrPort("239.1.1.1:5000")}
			batch := make([]Packet, 1)
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				_ = c.Send(dst, plain)
				batch[0].Data = last
				h(batch)
			}
		})
	}
}

// connFunc is a Conn whose Send calls a function.
type connFunc func(bufs [][]byte)

func (f connFunc) Send(_ []netip.AddrPort, bufs ...[]byte) error { f(bufs); return nil }
func (f connFunc) Join(netip.AddrPort) error                     { return nil }
func (f connFunc) Leave(netip.AddrPort) error                    { return nil }
func (f connFunc) LocalAddr() netip.AddrPort                     { return netip.AddrPort{} }
func (f connFunc) Close() error                                  { return nil }

// TestGuardReplayLater replays a captured datagram 1 ms and 60 s after it
// was received, on a driven clock: both are refused as replays.
func TestGuardReplayLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newGuardPair(t, guardSealer(t, "l", 1), guardSealer(t, "l", 1), 0)
		captured := p.send(t, dataDatagram(t, instA, 1, "once"))
		if p.deliver(captured) != 1 {
			t.Fatal("authentic datagram refused")
		}
		for i, wait := range []time.Duration{time.Millisecond, 60 * time.Second} {
			time.Sleep(wait)
			if p.deliver(captured) != 0 || p.rx.Stats().Replay != uint64(i+1) {
				t.Fatalf("replay %v later: stats %+v", wait, p.rx.Stats())
			}
		}
	})
}
