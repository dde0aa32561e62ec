package mqtt

import (
	"context"
	"strings"
	"testing"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
)

// badExtension is an MQTT 5 binary message whose extension name breaks
// the CloudEvents rules.
func badExtension() *paho.Publish {
	return &paho.Publish{Topic: "rsbd/in", QoS: 1, Payload: []byte("x"), Properties: &paho.PublishProperties{
		User: paho.UserProperties{{Key: "specversion", Value: "1.0"}, {Key: "id", Value: "1"}, {Key: "source", Value: "/s"},
			{Key: "type", Value: "t"}, {Key: "Not-Valid", Value: "v"}}}}
}

// badJSON is an MQTT 5 structured message that is not CloudEvents JSON.
func badJSON() *paho.Publish {
	return &paho.Publish{Topic: "rsbd/in", QoS: 1, Payload: []byte(`{"specversion":"1.0","id":`),
		Properties: &paho.PublishProperties{ContentType: cloudevent.MediaType}}
}

// fine is a plain message that converts.
func fine(payload string) *paho.Publish {
	return &paho.Publish{Topic: "rsbd/in", QoS: 1, Payload: []byte(payload)}
}

// awaitBridge publishes probes until the bridge's subscription delivers
// one on the bus.
func awaitBridge(t *testing.T, pub interface {
	Publish(context.Context, *paho.Publish) (*paho.PublishResponse, error)
}, read func(ctx context.Context) (string, bool)) {
	t.Helper()
	testutil.WaitFor(t, timeout, "the bridge's subscription", func() bool {
		publish5(t, pub, fine("probe"))
		ctx, cancel := context.WithTimeout(context.Background(), 300e6)
		defer cancel()
		data, ok := read(ctx)
		return ok && data == "probe"
	})
}

// inboundBridge starts mosquitto and the bridge "mq" that reads rsbd/in
// onto /in/, with its dead letters onto deadLetter ("" for none), and
// waits until the bridge's subscription delivers. It returns an MQTT 5
// publisher, readers of /in/ and of deadLetter (nil for none), and the
// bridge's metrics.
func inboundBridge(t *testing.T, deadLetter string) (pub *autopaho.ConnectionManager, rd, dead *client.Reader, metrics *bridge.Metrics) {
	t.Helper()
	m := brokertest.StartMosquitto(t, false)
	bus := bridgetest.Bus(t)
	rd = bridgetest.Reader(t, bus, "/in/")
	if deadLetter != "" {
		dead = bridgetest.Reader(t, bus, deadLetter)
	}
	cfg := busConfig(t, m.URL(), bridge.FormatBinary, nil)
	cfg.Out = bridge.Route{}
	cfg.DeadLetter = deadLetter
	metrics, _ = bridge.NewMetrics(nil)
	bridgetest.Run(t, bus, cfg, metrics)
	pub = publisher5(t, m.Addr())
	awaitBridge(t, pub, func(ctx context.Context) (string, bool) {
		ev, err := rd.Read(ctx)
		if err != nil {
			return "", false
		}
		return string(ev.Data), true
	})
	return pub, rd, dead, metrics
}

// readUntil reads events off rd until one with data last.
func readUntil(t *testing.T, rd *client.Reader, last string) {
	t.Helper()
	for {
		if _, e := bridgetest.ReadCE(t, rd); string(e.Data) == last {
			return
		}
	}
}

// countedOnce fails unless counter, of the bridge "mq" inbound, counted
// one message for the bad JSON and one for the bad attribute.
func countedOnce(t *testing.T, what string, counter prometheus.Collector) {
	t.Helper()
	for _, r := range []bridge.Reason{bridge.ReasonJSON, bridge.ReasonAttribute} {
		if v := bridgetest.Value(counter, "mq", bridge.DirIn, string(r)); v != 1 {
			t.Errorf("%s %s: %v, want 1", what, r, v)
		}
	}
}

func TestMQTTMalformedMessagesGoToTheDeadLetterScope(t *testing.T) {
	pub, rd, dead, metrics := inboundBridge(t, "/dead/")
	publish5(t, pub, badJSON())
	publish5(t, pub, badExtension())
	publish5(t, pub, fine("after"))
	for _, want := range []bridge.Reason{bridge.ReasonJSON, bridge.ReasonAttribute} {
		_, dl := bridgetest.ReadCE(t, dead)
		if dl.Extensions[bridge.ExtDeadLetterReason] != string(want) || !strings.HasPrefix(dl.ID, "rsbd/in-") {
			t.Fatalf("dead letter %+v, want reason %s", dl, want)
		}
	}
	readUntil(t, rd, "after")
	countedOnce(t, "dead letters", metrics.DeadLetters)
}

func TestMQTTMalformedMessagesWithoutDeadLetterAreDroppedAndCounted(t *testing.T) {
	pub, rd, _, metrics := inboundBridge(t, "")
	publish5(t, pub, badExtension())
	publish5(t, pub, badJSON())
	publish5(t, pub, fine("after"))
	readUntil(t, rd, "after")
	countedOnce(t, "drops", metrics.Drops)
}

func TestMQTTRawBridgeReadsMosquittoPubAndWritesDataAlone(t *testing.T) {
	m := brokertest.StartMosquitto(t, false)
	bus := bridgetest.Bus(t)
	rd := bridgetest.Reader(t, bus, "/in/")
	inf := bridgetest.Informer(t, bus, "/out/")
	sub := subscriber5(t, m.Addr(), "test-sub", "rsbd/out", 1, true)
	bridgetest.Run(t, bus, busConfig(t, m.URL(), bridge.FormatRaw, nil), nil)
	var e *cloudevent.Event
	testutil.WaitFor(t, timeout, "mosquitto_pub's message on the bus", func() bool {
		mosquittoPub(t, m.Addr(), "-V", "mqttv5", "-q", "2", "-t", "rsbd/in", "-m", "21.5 degrees")
		ctx, cancel := context.WithTimeout(context.Background(), 300e6)
		defer cancel()
		ev, err := rd.Read(ctx)
		if err != nil {
			return false
		}
		e, err = bridge.FromBus(&ev.Event, "")
		return err == nil
	})
	if !strings.HasPrefix(e.ID, "rsbd/in-") || e.Source != "/mqtt/rsbd/in" || e.Type != bridge.FallbackType ||
		e.DataContentType != bridge.ContentText || string(e.Data) != "21.5 degrees" || e.Extensions[ExtQoS] != "1" {
		t.Fatalf("event %+v", e)
	}
	bridgetest.PublishCE(t, inf, bridgetest.Event(3, 40))
	p := <-sub
	if string(p.Payload) != string(bridgetest.Event(3, 40).Data) || len(p.Properties.User) != 0 {
		t.Fatalf("raw message %+v", p)
	}
}
