package amqp091

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
	"github.com/rsbd/rsbd/internal/testutil"
)

// seqOf returns the sequence number of a seqEvent payload.
func seqOf(t *testing.T, body []byte) int {
	t.Helper()
	var v struct{ Seq int }
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	return v.Seq
}

// TestRabbitMQRestartLosesNoAcknowledgedEvent restarts the node in the
// middle of a stream in each direction and counts the events: every event
// the broker confirmed reaches the bus, every event the sender's Send
// returned for is in the queue.
func TestRabbitMQRestartLosesNoAcknowledgedEvent(t *testing.T) {
	node := brokertest.StartRabbitMQTest(t)
	const n, batch = 300, 20
	b := openBroker(t, node.URL091(), bridge.FormatBinary, nil)

	// Out: the restart happens while batches are being sent.
	s, _ := b.NewSender(context.Background(), "restart.out")
	defer s.Close()
	retries := bridgetest.SendStream(t, s, n, batch, bridgetest.SeqEvent, node.RestartAsync, timeout)
	ch := node.Channel091(t)
	out := map[int]bool{}
	testutil.WaitFor(t, timeout, "every confirmed event in the queue", func() bool {
		for {
			d, ok, err := ch.Get("restart.out", true)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				return len(out) == n
			}
			out[seqOf(t, d.Body)] = true
		}
	})
	t.Logf("out: %d of %d confirmed events in the queue after the restart; %d batches sent again", len(out), n, retries)

	// In: the queue holds n confirmed persistent messages; the node
	// restarts when the bridge has read half of them.
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	declare(t, ch, "restart.in")
	for i := range n {
		p, _ := Encode(bridge.FormatBinary, bridgetest.SeqEvent(i))
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "restart.in", false, false, p)
		if err != nil {
			t.Fatal(err)
		}
		if !dc.Wait() {
			t.Fatal("nack")
		}
	}
	in := bridgetest.Inbound(t, mustReceiver(t, b, "restart.in"), 0)
	seen, redelivered := map[int]bool{}, 0
	var restarted <-chan error
	for len(seen) < n {
		m := bridgetest.Next(t, in, timeout)
		if m.Event == nil {
			t.Fatalf("not an event: %v", m.Err)
		}
		seen[seqOf(t, m.Event.Data)] = true
		if m.Event.Extensions[ExtRedelivered] == "true" {
			redelivered++
		}
		if len(seen) == n/2 && restarted == nil {
			restarted = node.RestartAsync()
		}
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	t.Logf("in: the bridge read all %d messages across the restart (%d redelivered)", n, redelivered)
}
