package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/rttstat"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
)

// BenchmarkRequestReplyPairs measures request/reply conversations through
// one daemon process, run at once by pairs of socket clients in the test
// process: each requester sends a request and waits for the reply its
// replier sends back, one outstanding per pair. It reports round trips/s
// over all pairs, their p50/p99 and the daemon's polls for an answer per
// round trip (rsbd_socket_spin_waits_total). With one pair its readers
// poll for the answer (--socket-spin-wait, default 100µs); with more they
// do not; poll=0 turns the poll off.
func BenchmarkRequestReplyPairs(b *testing.B) {
	for _, pairs := range []int{1, 2, 4, 8} {
		for _, poll := range []string{"100µs", "0"} {
			b.Run(fmt.Sprintf("pairs=%d/poll=%s", pairs, poll), func(b *testing.B) { benchPairs(b, poll, pairs) })
		}
	}
}

func benchPairs(b *testing.B, poll string, pairs int) {
	d := newCluster(b).start("rr", opts{args: []string{"--socket-spin-wait", poll}})
	convs := make([]*conversation, pairs)
	for i := range convs {
		convs[i] = newConversation(b, d.Info().Socket, i)
	}
	polls0 := d.Metric("rsbd_socket_spin_waits_total")
	per := max(1, b.N/pairs)
	rtts := make([][]time.Duration, pairs)
	var wg sync.WaitGroup
	b.ResetTimer()
	for i, c := range convs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rtts[i] = c.run(b, per)
		}()
	}
	wg.Wait()
	b.StopTimer()
	var all []time.Duration
	for _, r := range rtts {
		all = append(all, r...)
	}
	b.ReportMetric(float64(len(all))/b.Elapsed().Seconds(), "round-trips/s")
	b.ReportMetric((d.Metric("rsbd_socket_spin_waits_total")-polls0)/float64(max(len(all), 1)), "polls/round-trip")
	rttstat.Report(b, all)
}

// conversation is one requester and one replier: the requester listens on
// /rr/<k>/reply/, the replier on /rr/<k>/request/.
type conversation struct {
	req, rep     *sockclient.ClientConn
	reqSc, repSc string
	request      []byte
	done         chan struct{}
}

// newConversation dials both clients, announces their listeners and
// starts the replier; it returns once a request has been answered.
func newConversation(b *testing.B, addr string, k int) *conversation {
	b.Helper()
	c := &conversation{reqSc: fmt.Sprintf("/rr/%d/request/", k), repSc: fmt.Sprintf("/rr/%d/reply/", k), done: make(chan struct{})}
	c.req, c.rep = dialRaw(b, addr), dialRaw(b, addr)
	announceRaw(b, c.req, c.repSc)
	announceRaw(b, c.rep, c.reqSc)
	c.request = frameOn(b, c.reqSc)
	reply := frameOn(b, c.repSc)
	go func() {
		defer close(c.done)
		var buf []byte
		for {
			got, err := c.rep.RecvInto(buf)
			if err != nil {
				return
			}
			buf = got
			if f, err := frame.ParseFrame(got); err == nil && f.Scope.String() == c.reqSc {
				if c.rep.Send(reply) != nil {
					return
				}
			}
		}
	}()
	b.Cleanup(func() { _ = c.rep.Close(); <-c.done; _ = c.req.Close() })
	// The first requests may go out before the daemon has learnt both
	// listeners: send until one is answered.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if time.Now().After(deadline) {
			b.Fatal("no reply within 10 s")
		}
		if err := c.req.Send(c.request); err != nil {
			b.Fatal(err)
		}
		if c.awaitReply(b, 50*time.Millisecond) {
			break
		}
	}
	_ = c.req.SetReadDeadline(time.Time{})
	return c
}

// run makes n round trips and returns their times.
func (c *conversation) run(b *testing.B, n int) []time.Duration {
	rtts := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := c.req.Send(c.request); err != nil {
			b.Error(err)
			return rtts
		}
		if !c.awaitReply(b, 0) {
			return rtts
		}
		rtts = append(rtts, time.Since(start))
	}
	return rtts
}

// awaitReply reads until the reply, skipping other frames (introspection,
// late replies of the warm-up); within timeout if positive. It reports
// false after a timeout or an error (then reported).
func (c *conversation) awaitReply(b *testing.B, timeout time.Duration) bool {
	if timeout > 0 {
		_ = c.req.SetReadDeadline(time.Now().Add(timeout))
	}
	for {
		got, err := c.req.Recv()
		if err != nil {
			if timeout <= 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
				b.Error(err)
			}
			return false
		}
		if f, err := frame.ParseFrame(got); err == nil && f.Scope.String() == c.repSc {
			return true
		}
	}
}

// dialRaw connects a raw socket client to addr.
func dialRaw(b *testing.B, addr string) *sockclient.ClientConn {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := sockclient.Dial(ctx, addr)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// announceRaw sends the Hello of a listener on sc.
func announceRaw(b *testing.B, c *sockclient.ClientConn, sc string) {
	b.Helper()
	id := notification.NewParticipantID()
	data, err := helloData(id, sc)
	if err != nil {
		b.Fatal(err)
	}
	body, err := notification.Marshal(&notification.Event{Scope: scope.MustParse(participantScope(id)),
		WireSchema: rsbsocket.HelloWireSchema, Data: data, ID: notification.EventID{SenderID: id}})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Send(body); err != nil {
		b.Fatal(err)
	}
}

// frameOn is a 64-byte event on sc.
func frameOn(b *testing.B, sc string) []byte {
	b.Helper()
	body, err := notification.Marshal(&notification.Event{Scope: scope.MustParse(sc), WireSchema: notification.SchemaBytes,
		Data: make([]byte, 64), ID: notification.EventID{SenderID: notification.NewParticipantID(), SequenceNumber: 1}})
	if err != nil {
		b.Fatal(err)
	}
	return body
}
