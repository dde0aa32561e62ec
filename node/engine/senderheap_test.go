package engine

import (
	"net/netip"
	"testing"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// TestSenderDeadlinesExact: the engine's earliest sender deadline follows
// the streams' heartbeats as sends move them later, so no timer fires
// before a heartbeat is due; a tick at that deadline sends the heartbeat
// of that stream alone, and freed streams leave no deadline behind.
func TestSenderDeadlinesExact(t *testing.T) {
	const hbMin = 2 * time.Millisecond
	e, env := newTestEngine(t, func(c *Config) { c.Streams.Sender.HeartbeatMin = hbMin })
	scopes := []scope.Scope{scope.MustParse("/hb/a/"), scope.MustParse("/hb/b/")}
	var ids []datagram.GroupID
	for _, sc := range scopes {
		ids = append(ids, group.ID(sc))
	}
	if err := env.peers.Update("p", group.PeerState{Version: 1, Instance: datagram.InstanceID{0xcc}, Groups: ids}); err != nil {
		t.Fatal(err)
	}
	start := time.Unix(2000, 0)
	body := []byte("x")
	publish := func(sc scope.Scope, now time.Time) {
		step(e, now, func() {
			e.publish(Request{Body: body, Size: len(body), Scope: sc, Class: datagram.ReliableOrdered}, now)
		})
	}
	publish(scopes[0], start)
	publish(scopes[1], start.Add(hbMin/4))
	// Stream a sends again: its heartbeat moves past b's.
	publish(scopes[0], start.Add(hbMin/2))
	if got, want := e.senderDue(), start.Add(hbMin/4+hbMin); !got.Equal(want) {
		t.Fatalf("earliest deadline %v, want b's heartbeat at %v", got.Sub(start), want.Sub(start))
	}
	env.takeSent(netip.AddrPort{})
	at := e.senderDue()
	step(e, at, func() {
		if !e.tick(at) {
			t.Error("a tick at a heartbeat found nothing to do")
		}
	})
	sent := env.takeSent(netip.AddrPort{})
	if len(sent) != 1 {
		t.Fatalf("the tick sent %d datagrams, want b's heartbeat", len(sent))
	}
	var d datagram.Datagram
	if err := datagram.Decode(sent[0].Data, &d); err != nil || d.Kind != datagram.KindHeartbeat || d.Stream.Group != ids[1] {
		t.Fatalf("the tick sent %+v (%v), want a heartbeat of b's group", d, err)
	}
	if got, want := e.senderDue(), start.Add(hbMin/2+hbMin); !got.Equal(want) {
		t.Fatalf("after b's heartbeat the earliest deadline is %v, want a's at %v", got.Sub(start), want.Sub(start))
	}
	for i, st := range e.due {
		if st.dueIdx != i {
			t.Fatalf("stream at %d filed as %d", i, st.dueIdx)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, st := range e.senders {
		st.s.ReleaseAll(&e.out)
	}
	e.handleOutput(start)
	e.expireSenders(start.Add(DefaultSenderIdle + time.Hour))
	if len(e.senders) != 0 || len(e.due) != 0 || !e.senderDue().IsZero() {
		t.Fatalf("after expiry: %d senders, %d deadlines", len(e.senders), len(e.due))
	}
}
