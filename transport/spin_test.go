package transport

import (
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/spinpay"
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
	t.Cleanup(spinpay.IgnorePreemption()) // the poll runs to its limit
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
	if runtime.GOOS == "linux" {
		if a := testing.AllocsPerRun(1000, func() { s.readable() }); a != 0 {
			t.Fatalf("a poll of the socket allocates %v times", a)
		}
	}
}

// TestSpinAfterReply: a reader polls after a delivery its Handler
// answered (an echo calling Answered) from a peer outside this process,
// not after one that was only received or answered without saying so, nor
// when the peer is another Endpoint of this process; a negative SpinWait
// never polls.
func TestSpinAfterReply(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("polling is implemented on Linux")
	}
	for _, c := range []struct {
		name      string
		spin      time.Duration
		echo      bool
		answered  bool
		inProcess bool // the client is an Endpoint, not a plain socket
		wantSpins bool
	}{
		{"echo", 0, true, true, false, true},
		{"echo, not told", 0, true, false, false, false},
		{"receive only", 0, false, false, false, false},
		{"echo, polling off", -1, true, true, false, false},
		{"echo, peer in this process", 0, true, true, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var srv atomic.Pointer[Endpoint]
			var received atomic.Int64
			h := func(batch []Packet) { received.Add(int64(len(batch))) }
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
			ping := pinger(t, c.inProcess, unicastAddr(server))
			const n = 20
			for i := range n {
				ping(byte(i), c.echo)
			}
			if !c.echo {
				waitStats(t, server, "all received", func(s Stats) bool { return s.Received == n })
			}
			st := server.Stats()
			if spun := st.SpinWaits > 0; spun != c.wantSpins {
				t.Fatalf("spin waits %d, want some: %v", st.SpinWaits, c.wantSpins)
			}
			if skipped := st.SpinInProcess > 0; skipped != (c.inProcess && c.answered && c.spin >= 0) {
				t.Fatalf("%d answered deliveries from this process not polled after", st.SpinInProcess)
			}
		})
	}
}

// pinger returns a function that sends one datagram to dst and, if echo,
// waits for it to come back: from an Endpoint of this process (with
// polling off) or from a plain socket, which no Endpoint knows.
func pinger(t *testing.T, endpoint bool, dst netip.AddrPort) func(b byte, echo bool) {
	t.Helper()
	if endpoint {
		got := newSink()
		client := open(t, Config{SpinWait: -1}, got.handle)
		return func(b byte, echo bool) {
			if err := client.Send([]netip.AddrPort{dst}, []byte{b}); err != nil {
				t.Fatal(err)
			}
			if echo {
				got.next(t)
			}
		}
	}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	buf := make([]byte, 64)
	return func(b byte, echo bool) {
		if _, err := c.WriteToUDPAddrPort([]byte{b}, dst); err != nil {
			t.Fatal(err)
		}
		if !echo {
			return
		}
		if err := c.SetReadDeadline(time.Now().Add(timeout)); err != nil {
			t.Fatal(err)
		}
		if n, _, err := c.ReadFromUDPAddrPort(buf); err != nil || n != 1 || buf[0] != b {
			t.Fatalf("echo of %d: %d bytes, %v", b, n, err)
		}
	}
}

// TestSpinResumesAfterOwnDatagram: when the reply to a delivery also goes
// to a group the Endpoint joined, the kernel loops it back to the socket
// that polls for the answer. That batch of the Endpoint's own datagram is
// not the answer: the reader goes on polling until the same deadline, and
// the next ping is caught by such a resumed poll. A reply that does not
// come back never resumes a poll.
func TestSpinResumesAfterOwnDatagram(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("polling is implemented on Linux")
	}
	// Every poll runs to its answer, however the loaded host or the race
	// detector spaces its checks.
	t.Cleanup(spinpay.IgnorePreemption())
	for _, loop := range []bool{true, false} {
		t.Run(fmt.Sprintf("reply looped back %v", loop), func(t *testing.T) {
			g := testGroups(t, 1)[0]
			var srv atomic.Pointer[Endpoint]
			h := func(batch []Packet) {
				for _, p := range batch {
					// The group first: its looped-back copy is queued before
					// the pinger can have the reply and send the next ping.
					dst := []netip.AddrPort{p.From}
					if loop {
						dst = []netip.AddrPort{g, p.From}
					}
					_ = srv.Load().Send(dst, p.Data)
				}
				srv.Load().Answered()
			}
			// One datagram per read, so that the looped-back reply is read
			// alone and never in one batch with the next ping.
			server := open(t, Config{SpinWait: MaxSpinWait, ReadBatch: 1}, h)
			srv.Store(server)
			mustJoin(t, server, g)
			ping := pinger(t, false, g)
			const n = 20
			for i := range n {
				ping(byte(i), true)
			}
			st := server.Stats()
			if !loop {
				if st.SpinResumes != 0 || st.Own != 0 {
					t.Fatalf("%d polls resumed, %d own datagrams, with no reply looped back", st.SpinResumes, st.Own)
				}
				return
			}
			st = waitStats(t, server, "own replies set aside", func(s Stats) bool { return s.Own == n })
			if st.SpinResumes == 0 {
				t.Fatalf("no poll resumed after %d own datagrams: %+v", st.Own, st)
			}
			// A wait hits at most once, on the looped-back reply; a hit
			// beyond the waits is a ping caught by a resumed poll.
			if st.SpinHits <= st.SpinWaits {
				t.Fatalf("no ping caught by a resumed poll: waits %d, hits %d, resumes %d",
					st.SpinWaits, st.SpinHits, st.SpinResumes)
			}
		})
	}
}

// TestSpinStopsWhenAnswersComeLate: a reader whose polls keep missing (the
// client sends its next datagram well after SpinWait) stops polling after a
// few misses, counts the polls it skipped, and still probes now and then.
func TestSpinStopsWhenAnswersComeLate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("polling is implemented on Linux")
	}
	var srv atomic.Pointer[Endpoint]
	h := func(batch []Packet) {
		for _, p := range batch {
			_ = srv.Load().Send([]netip.AddrPort{p.From}, p.Data)
		}
		srv.Load().Answered()
	}
	const spin = 100 * time.Microsecond
	server := open(t, Config{SpinWait: spin}, h)
	srv.Store(server)
	ping := pinger(t, false, unicastAddr(server))
	const n = 64
	pace := time.NewTicker(20 * spin) // the client's think time: every poll misses
	defer pace.Stop()
	for i := range n {
		ping(byte(i), true)
		<-pace.C
	}
	st := server.Stats()
	if st.SpinSkips == 0 || st.SpinWaits >= n/2 || st.SpinWaits == 0 {
		t.Fatalf("after %d late answers: %d polls, %d skipped; want a few polls (probes among them) and most skipped",
			n, st.SpinWaits, st.SpinSkips)
	}
}
