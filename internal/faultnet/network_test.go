package faultnet

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/rsbd/rsbd/transport"
)

// Endpoint is a drop-in for the real transport.
var _ transport.Conn = (*Endpoint)(nil)

func TestGroupsAndUnicast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNetwork(t, Config{})
		a, ra := listen(t, n)
		b, rb := listen(t, n)
		c, rc := listen(t, n)
		for _, e := range []*Endpoint{a, b, c} {
			if err := e.Join(group); err != nil {
				t.Fatal(err)
			}
		}
		send(t, a, group, "to all")
		send(t, a, b.LocalAddr(), "to b")
		send(t, a, netip.MustParseAddrPort("10.9.9.9:1"), "nowhere")
		synctest.Wait()
		if len(ra.all()) != 0 {
			t.Fatalf("sender received its own multicast without Loop: %v", ra.all())
		}
		if got := rb.all(); len(got) != 2 || got[0].data != "to all" || got[1].data != "to b" || got[0].from != a.LocalAddr() {
			t.Fatalf("b got %+v", got)
		}
		if got := rc.all(); len(got) != 1 || got[0].data != "to all" {
			t.Fatalf("c got %+v", got)
		}
		if err := c.Leave(group); err != nil {
			t.Fatal(err)
		}
		send(t, a, group, "after leave")
		synctest.Wait()
		if len(rc.all()) != 1 || len(rb.all()) != 3 {
			t.Fatalf("after c left: b %d, c %d datagrams", len(rb.all()), len(rc.all()))
		}
		if s := n.Stats(); s.NoRoute != 1 || s.Delivered != 4 || s.Sent != 4 {
			t.Fatalf("stats %+v", s)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := c.Send([]netip.AddrPort{group}, []byte("x")); !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("Send after Close: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
}

func TestLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNetwork(t, Config{Loop: true})
		a, ra := listen(t, n)
		if err := a.Join(group); err != nil {
			t.Fatal(err)
		}
		send(t, a, group, "echo")
		synctest.Wait()
		if got := ra.all(); len(got) != 1 || got[0].data != "echo" {
			t.Fatalf("got %+v", got)
		}
	})
}

// TestLossRate checks the loss rate of a lossy direction within tolerance
// while the other direction stays perfect.
func TestLossRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNetwork(t, Config{Seed: 1})
		a, ra := listen(t, n)
		b, rb := listen(t, n)
		if err := n.SetLink(a.LocalAddr(), b.LocalAddr(), Faults{Loss: 0.1}); err != nil {
			t.Fatal(err)
		}
		const total = 20000
		sendN(t, a, b.LocalAddr(), total)
		sendN(t, b, a.LocalAddr(), 1000)
		synctest.Wait()
		rate := 1 - float64(len(rb.all()))/total
		// 3 standard deviations of a binomial rate at 10%: 0.0064.
		if math.Abs(rate-0.1) > 0.01 {
			t.Fatalf("loss rate %.4f, want 0.10 +- 0.01", rate)
		}
		if len(ra.all()) != 1000 {
			t.Fatalf("the reverse direction lost datagrams: %d of 1000", len(ra.all()))
		}
		s := n.LinkStats(a.LocalAddr(), b.LocalAddr())
		if s.Lost+s.Delivered != total || int(s.Delivered) != len(rb.all()) {
			t.Fatalf("link stats %+v", s)
		}
		t.Logf("loss rate %.4f", rate)
	})
}

// TestBurstLoss checks the Gilbert-Elliott model: the long-run loss rate and
// losses that come in runs, unlike independent loss at the same rate.
func TestBurstLoss(t *testing.T) {
	const total = 50000
	burst := Burst{Enter: 0.01, Exit: 0.2}
	want := burst.Enter / (burst.Enter + burst.Exit) // 0.0476
	for _, c := range []struct {
		name    string
		faults  Faults
		minRun  float64
		maxRun  float64
		comment string
	}{
		{"burst", Faults{Burst: burst}, 3, 8, "mean run 1/Exit = 5"},
		{"independent", Faults{Loss: want}, 1, 1.2, "mean run 1/(1-p) = 1.05"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newNetwork(t, Config{Seed: 7, Faults: c.faults})
				a, _ := listen(t, n)
				b, rb := listen(t, n)
				sendN(t, a, b.LocalAddr(), total)
				synctest.Wait()
				if s := n.Stats(); s.QueueDrops != 0 {
					t.Fatalf("queue drops distort the loss: %+v", s)
				}
				rate, run := lossRuns(rb, total)
				if math.Abs(rate-want) > 0.015 {
					t.Fatalf("loss rate %.4f, want %.4f", rate, want)
				}
				if run < c.minRun || run > c.maxRun {
					t.Fatalf("mean loss run %.2f, want [%v, %v] (%s)", run, c.minRun, c.maxRun, c.comment)
				}
				t.Logf("loss rate %.4f, mean run %.2f", rate, run)
			})
		})
	}
}

// lossRuns returns the loss rate and mean run length of lost datagrams,
// from the numbered payloads received.
func lossRuns(r *recorder, total int) (rate, meanRun float64) {
	received := make([]bool, total)
	for _, p := range r.all() {
		i, _ := strconv.Atoi(p.data)
		received[i] = true
	}
	lost, runs := 0, 0
	for i, ok := range received {
		if !ok {
			lost++
			if i == 0 || received[i-1] {
				runs++
			}
		}
	}
	return float64(lost) / float64(total), float64(lost) / float64(max(runs, 1))
}

func TestDuplication(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNetwork(t, Config{Seed: 3, Faults: Faults{Duplicate: 0.2}})
		a, _ := listen(t, n)
		b, rb := listen(t, n)
		const total = 10000
		sendN(t, a, b.LocalAddr(), total)
		synctest.Wait()
		counts := rb.counts()
		dups := 0
		for i := range total {
			switch counts[fmt.Sprint(i)] {
			case 1:
			case 2:
				dups++
			default:
				t.Fatalf("datagram %d arrived %d times", i, counts[fmt.Sprint(i)])
			}
		}
		if rate := float64(dups) / total; math.Abs(rate-0.2) > 0.02 {
			t.Fatalf("duplication rate %.4f, want 0.20", rate)
		}
		if s := n.Stats(); int(s.Duplicated) != dups || int(s.Delivered) != total+dups {
			t.Fatalf("stats %+v, %d duplicates", s, dups)
		}
	})
}
