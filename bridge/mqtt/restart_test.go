package mqtt

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/eclipse/paho.golang/paho"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
)

// streamLen and batchLen shape the streams of these tests.
const (
	streamLen = 200
	batchLen  = 20
)

// seqOf returns the sequence number of an event of seqEvent.
func seqOf(t *testing.T, data []byte) int {
	t.Helper()
	var v struct{ Seq int }
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("payload %q: %v", data, err)
	}
	return v.Seq
}

func TestMQTTOrderIsKeptBothWays(t *testing.T) {
	for _, proto := range []string{"5", "3.1.1"} {
		t.Run(proto, func(t *testing.T) {
			m := brokertest.StartMosquitto(t, false)
			b := openBroker(t, m.URL(), bridge.FormatDefault, map[string]string{"protocol": proto})
			r, err := b.NewReceiver(context.Background(), "ord/#")
			if err != nil {
				t.Fatal(err)
			}
			in := bridgetest.Inbound(t, r, 1024)
			pub := publisher5(t, m.Addr())
			subscribed(t, func(p string) { publish5(t, pub, &paho.Publish{Topic: "ord/probe", QoS: 1, Payload: []byte(p)}) }, in)
			s, err := b.NewSender(context.Background(), "ord/s")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			bridgetest.SendStream(t, s, streamLen, batchLen, bridgetest.SeqEvent, nil, timeout)
			for i := range streamLen {
				got := bridgetest.Next(t, in, timeout)
				if got.Event == nil || got.Event.Extensions["seq"] != strconv.Itoa(i) {
					t.Fatalf("message %d: %+v", i, got)
				}
			}
		})
	}
}

func TestMQTTSenderLosesNoAcknowledgedEventAcrossABrokerRestart(t *testing.T) {
	m := brokertest.StartMosquitto(t, true)
	sub := subscriber5(t, m.Addr(), "test-durable", "rs/out", 1, false)
	s, err := openBroker(t, m.URL(), bridge.FormatBinary, nil).NewSender(context.Background(), "rs/out")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	retries := bridgetest.SendStream(t, s, streamLen, batchLen, bridgetest.SeqEvent, m.RestartAsync, timeout)
	seen := map[int]bool{}
	for len(seen) < streamLen {
		select {
		case p := <-sub:
			seen[seqOf(t, p.Payload)] = true
		case <-timeAfter():
			t.Fatalf("the subscriber has %d of %d acknowledged events (%d batches sent again); missing %v", len(seen), streamLen, retries, bridgetest.Missing(seen, streamLen))
		}
	}
	t.Logf("%d of %d acknowledged events arrived; %d batches sent again", len(seen), streamLen, retries)
}

func TestMQTTReceiverLosesNoAcknowledgedMessageAcrossABrokerRestart(t *testing.T) {
	m := brokertest.StartMosquitto(t, true)
	r, err := openBroker(t, m.URL(), bridge.FormatBinary, nil).NewReceiver(context.Background(), "rs/in")
	if err != nil {
		t.Fatal(err)
	}
	in := bridgetest.Inbound(t, r, 1024)
	pub := publisher5(t, m.Addr())
	subscribed(t, func(p string) { publish5(t, pub, &paho.Publish{Topic: "rs/in", QoS: 1, Payload: []byte(p)}) }, in)
	acked := 0
	var restarted <-chan error
	for i := range streamLen {
		if i == streamLen/2 {
			restarted = m.RestartAsync()
		}
		for {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			err := pub.AwaitConnection(ctx)
			if err == nil {
				_, err = pub.Publish(ctx, &paho.Publish{Topic: "rs/in", QoS: 1, Payload: []byte(`{"seq":` + strconv.Itoa(i) + `}`)})
			}
			cancel()
			if err == nil {
				acked++
				break
			}
		}
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for len(seen) < acked {
		select {
		case got := <-in:
			if got.Event == nil {
				t.Fatalf("not an event: %v", got.Err)
			}
			if string(got.Event.Data) != "probe" {
				seen[seqOf(t, got.Event.Data)] = true
			}
		case <-timeAfter():
			t.Fatalf("the bridge read %d of %d acknowledged messages; missing %v", len(seen), acked, bridgetest.Missing(seen, acked))
		}
	}
	t.Logf("the bridge read all %d acknowledged messages", acked)
}
