package faultnet

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rsbd/rsbd/transport"
)

// TestDelayInVirtualTime: an hour of delay passes instantly in a bubble and
// the datagram arrives exactly when due.
func TestDelayInVirtualTime(t *testing.T) {
	realStart := time.Now()
	synctest.Test(t, func(t *testing.T) {
		n := newNetwork(t, Config{Faults: Faults{Delay: time.Hour}})
		a, _ := listen(t, n)
		b, rb := listen(t, n)
		start := time.Now()
		send(t, a, b.LocalAddr(), "late")
		synctest.Wait()
		if len(rb.all()) != 0 {
			t.Fatal("delivered before its delay")
		}
		advance(2 * time.Hour)
		got := rb.all()
		if len(got) != 1 || got[0].at.Sub(start) != time.Hour {
			t.Fatalf("got %+v, want one datagram after exactly 1h", got)
		}
	})
	if d := time.Since(realStart); d > 10*time.Second {
		t.Fatalf("virtual delay took %v of real time", d)
	}
}

// TestJitterReorders sends a datagram every millisecond over a link with
// 10 ms delay and 5 ms jitter: all arrive within [10, 15) ms of sending, and
// some overtake others.
func TestJitterReorders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNetwork(t, Config{Seed: 5, Faults: Faults{Delay: 10 * time.Millisecond, Jitter: 5 * time.Millisecond}})
		a, _ := listen(t, n)
		b, rb := listen(t, n)
		start := time.Now()
		const total = 500
		for i := range total {
			send(t, a, b.LocalAddr(), strconv.Itoa(i))
			advance(time.Millisecond)
		}
		advance(time.Second)
		got := rb.all()
		if len(got) != total {
			t.Fatalf("%d of %d arrived", len(got), total)
		}
		inversions := 0
		for k, p := range got {
			i, _ := strconv.Atoi(p.data)
			sent := start.Add(time.Duration(i) * time.Millisecond)
			if d := p.at.Sub(sent); d < 10*time.Millisecond || d >= 15*time.Millisecond {
				t.Fatalf("datagram %d took %v", i, d)
			}
			if k > 0 {
				if prev, _ := strconv.Atoi(got[k-1].data); prev > i {
					inversions++
				}
			}
		}
		if inversions == 0 {
			t.Fatal("jitter larger than the send interval reordered nothing")
		}
		t.Logf("%d of %d arrivals out of order", inversions, total)
	})
}

// TestReorderHoldBack: a fraction of datagrams is held back and arrives
// after later ones.
func TestReorderHoldBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := Faults{Reorder: 0.1, ReorderDelay: 50 * time.Millisecond}
		n := newNetwork(t, Config{Seed: 9, Faults: f})
		a, _ := listen(t, n)
		b, rb := listen(t, n)
		const total = 2000
		for i := range total {
			send(t, a, b.LocalAddr(), strconv.Itoa(i))
			advance(time.Millisecond)
		}
		advance(time.Second)
		got := rb.all()
		late := 0
		for k, p := range got {
			if i, _ := strconv.Atoi(p.data); i < k {
				late++ // arrived after a datagram sent later
			}
		}
		s := n.Stats()
		if len(got) != total || late == 0 {
			t.Fatalf("%d arrived, %d late", len(got), late)
		}
		if r := float64(s.Reordered) / total; r < 0.08 || r > 0.12 {
			t.Fatalf("held back %.3f, want 0.10", r)
		}
	})
}

// TestBlackout cuts b off from 55 ms to 100 ms while a and b send to each
// other every 10 ms (at 5, 15, ... ms) over 22 ms links (arrivals at 27,
// 37, ... ms never coincide with the blackout's start). Lost: datagrams to
// b arriving during the blackout (sent at 35 and 45 ms) and all sent by or
// to b during it.
func TestBlackout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNetwork(t, Config{Faults: Faults{Delay: 22 * time.Millisecond}})
		a, ra := listen(t, n)
		b, rb := listen(t, n)
		advance(5 * time.Millisecond)
		for ms := 5; ms < 200; ms += 10 {
			if ms == 55 {
				n.Blackout(b.LocalAddr(), 45*time.Millisecond) // until 100 ms
			}
			send(t, a, b.LocalAddr(), strconv.Itoa(ms))
			send(t, b, a.LocalAddr(), strconv.Itoa(ms))
			advance(10 * time.Millisecond)
		}
		advance(time.Second)
		var want []string
		for ms := 5; ms < 200; ms += 10 {
			if ms < 35 || ms >= 105 {
				want = append(want, strconv.Itoa(ms))
			}
		}
		if got := payloads(rb); !slices.Equal(got, want) {
			t.Fatalf("b received %v, want %v", got, want)
		}
		var wantA []string
		for ms := 5; ms < 200; ms += 10 {
			if ms < 55 || ms >= 105 {
				wantA = append(wantA, strconv.Itoa(ms))
			}
		}
		if got := payloads(ra); !slices.Equal(got, wantA) {
			t.Fatalf("a received %v, want %v", got, wantA)
		}
	})
}

func payloads(r *recorder) []string {
	var out []string
	for _, p := range r.all() {
		out = append(out, p.data)
	}
	return out
}

// TestDeterministic runs the same faulty scenario twice with one seed and
// once with another: the arrival traces (virtual time, receiver, payload)
// must be identical for the same seed and differ for another.
func TestDeterministic(t *testing.T) {
	run := func(seed uint64) string {
		var trace string
		synctest.Test(t, func(t *testing.T) {
			f := Faults{Loss: 0.05, Burst: Burst{Enter: 0.02, Exit: 0.3}, Duplicate: 0.05,
				Delay: time.Millisecond, Jitter: 3 * time.Millisecond, Reorder: 0.05, ReorderDelay: 20 * time.Millisecond}
			n := newNetwork(t, Config{Seed: seed, Faults: f})
			a, _ := listen(t, n)
			b, rb := listen(t, n)
			c, rc := listen(t, n)
			for _, e := range []*Endpoint{b, c} {
				if err := e.Join(group); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			for i := range 300 {
				send(t, a, group, strconv.Itoa(i))
				advance(500 * time.Microsecond)
			}
			advance(time.Second)
			for _, r := range []*recorder{rb, rc} {
				for _, p := range r.all() {
					trace += fmt.Sprintf("%v %s;", p.at.Sub(start), p.data)
				}
				trace += "|"
			}
		})
		return trace
	}
	first, again, other := run(42), run(42), run(43)
	if first != again {
		t.Fatal("same seed, different traces")
	}
	if first == other {
		t.Fatal("different seeds, same trace")
	}
}

// TestQueueLimit: a receiver that does not keep up loses what exceeds its
// queue, counted as QueueDrops.
func TestQueueLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNetwork(t, Config{QueueLimit: 10})
		a, _ := listen(t, n)
		entered, release := make(chan struct{}), make(chan struct{})
		received := 0
		b, err := n.Listen(netip.AddrPort{}, func(batch []transport.Packet) {
			if received == 0 {
				close(entered)
				<-release
			}
			received += len(batch)
		})
		if err != nil {
			t.Fatal(err)
		}
		send(t, a, b.LocalAddr(), "first")
		<-entered
		sendN(t, a, b.LocalAddr(), 100)
		close(release)
		synctest.Wait()
		if s := n.Stats(); received != 11 || s.QueueDrops != 90 {
			t.Fatalf("received %d, stats %+v", received, s)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestValidate(t *testing.T) {
	for name, f := range map[string]Faults{
		"loss":      {Loss: 1.5},
		"negative":  {Duplicate: -0.1},
		"nan":       {Reorder: nan()},
		"delay":     {Delay: -time.Second},
		"burst":     {Burst: Burst{Enter: 0.1}},
		"bad loss":  {Burst: Burst{Enter: 0.1, Exit: 0.1, BadLoss: 2}},
		"jitter":    {Jitter: -1},
		"hold-back": {ReorderDelay: -1},
	} {
		if err := f.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := New(Config{Faults: f}); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: New = %v", name, err)
		}
	}
	n := newNetwork(t, Config{})
	if err := n.SetLink(netip.AddrPort{}, netip.AddrPort{}, Faults{Loss: 2}); !errors.Is(err, ErrConfig) {
		t.Errorf("SetLink: %v", err)
	}
	if _, err := n.Listen(netip.MustParseAddrPort("239.1.1.1:5"), func([]transport.Packet) {}); !errors.Is(err, transport.ErrAddress) {
		t.Errorf("Listen on a group: %v", err)
	}
	addr := netip.MustParseAddrPort("10.1.1.1:5")
	e, err := n.Listen(addr, func([]transport.Packet) {})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := n.Listen(addr, func([]transport.Packet) {}); !errors.Is(err, ErrAddressInUse) {
		t.Errorf("second Listen: %v", err)
	}
	if err := e.Send([]netip.AddrPort{addr}, make([]byte, transport.DefaultMaxDatagram+1)); !errors.Is(err, transport.ErrTooLarge) {
		t.Errorf("oversize Send: %v", err)
	}
	if err := e.Join(addr); !errors.Is(err, transport.ErrAddress) {
		t.Errorf("Join a unicast address: %v", err)
	}
}

func nan() float64 { var z float64; return z / z }
