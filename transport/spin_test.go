package transport

import (
	"net"
	"net/netip"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestSpinnerWait: wait reports a queued datagram at once, gives up on an
// empty socket once the limit passed, and never polls without a limit.
func TestSpinnerWait(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("polling is implemented on Linux")
	}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	st := &counters{}
	s := spinner{limit: 2 * time.Millisecond, rc: rc, st: st}
	start := time.Now()
	if s.wait() {
		t.Fatal("wait reported a datagram on an empty socket")
	}
	if time.Since(start) < s.limit {
		t.Fatalf("wait gave up after %v, before its limit %v", time.Since(start), s.limit)
	}
	if _, err := c.WriteToUDP([]byte("x"), c.LocalAddr().(*net.UDPAddr)); err != nil {
		t.Fatal(err)
	}
	s.limit = timeout // the datagram is queued or about to be
	if !s.wait() {
		t.Fatal("wait missed a queued datagram")
	}
	if st.spinWaits.Load() != 2 || st.spinHits.Load() != 1 {
		t.Fatalf("waits %d hits %d, want 2 and 1", st.spinWaits.Load(), st.spinHits.Load())
	}
	off := spinner{rc: rc, st: st}
	if off.wait() || st.spinWaits.Load() != 2 {
		t.Fatal("a spinner without limit polled")
	}
}

// TestSpinAfterReply: a reader polls after a delivery its Handler
// answered (an echo calling Answered), not after one that was only
// received or answered without saying so; a negative SpinWait never
// polls.
func TestSpinAfterReply(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("polling is implemented on Linux")
	}
	for _, c := range []struct {
		name      string
		spin      time.Duration
		echo      bool
		answered  bool
		wantSpins bool
	}{
		{"echo", 0, true, true, true},
		{"echo, not told", 0, true, false, false},
		{"receive only", 0, false, false, false},
		{"echo, polling off", -1, true, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := newSink()
			var srv atomic.Pointer[Endpoint]
			h := got.handle
			if c.echo {
				h = func(batch []Packet) {
					for _, p := range batch {
						_ = srv.Load().Send([]netip.AddrPort{p.From}, p.Data)
					}
					if c.answered {
						srv.Load().Answered()
					}
				}
			}
			server := open(t, Config{SpinWait: c.spin}, h)
			srv.Store(server)
			client := open(t, Config{SpinWait: -1}, got.handle)
			const n = 20
			for i := range n {
				if err := client.Send([]netip.AddrPort{unicastAddr(server)}, []byte{byte(i)}); err != nil {
					t.Fatal(err)
				}
				if c.echo {
					got.next(t)
				}
			}
			if !c.echo {
				waitStats(t, server, "all received", func(s Stats) bool { return s.Received == n })
			}
			st := server.Stats()
			if spun := st.SpinWaits > 0; spun != c.wantSpins {
				t.Fatalf("spin waits %d, want some: %v", st.SpinWaits, c.wantSpins)
			}
			if cs := client.Stats(); cs.SpinWaits != 0 {
				t.Fatalf("client with polling off polled %d times", cs.SpinWaits)
			}
		})
	}
}
