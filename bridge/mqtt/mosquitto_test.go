package mqtt

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
	"github.com/rsbd/rsbd/cloudevent"
)

// publish5 publishes payload on topic with a plain MQTT 5 client.
func publish5(t *testing.T, cm interface {
	Publish(context.Context, *paho.Publish) (*paho.PublishResponse, error)
}, p *paho.Publish) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := cm.Publish(ctx, p); err != nil {
		t.Fatal(err)
	}
}

func TestMQTT5BinaryOutCarriesUserPropertiesAndContentType(t *testing.T) {
	m := brokertest.StartMosquitto(t, false)
	sub := subscriber5(t, m.Addr(), "test-sub", "out/5", 1, true)
	s, err := openBroker(t, m.URL(), bridge.FormatDefault, nil).NewSender(context.Background(), "out/5")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bridgetest.SendAll(t, s, []*cloudevent.Event{sample()}, timeout)
	p := <-sub
	if p.Properties.ContentType != "application/json" || string(p.Payload) != `{"c":21.5}` || p.QoS != 1 {
		t.Fatalf("publish %+v", p)
	}
	props := map[string]string{}
	for _, u := range p.Properties.User {
		props[u.Key] = u.Value
	}
	if props["specversion"] != "1.0" || props["id"] != "e-1" || props["partitionkey"] != "k1" || props["ce_id"] != "" {
		t.Fatalf("user properties %v", props)
	}
}

func TestMQTT5BridgeToBridgeKeepsEveryAttributeAndQoS2(t *testing.T) {
	m := brokertest.StartMosquitto(t, false)
	b := openBroker(t, m.URL(), bridge.FormatBinary, map[string]string{"qos": "2"})
	r, err := b.NewReceiver(context.Background(), "x/#")
	if err != nil {
		t.Fatal(err)
	}
	in := bridgetest.Inbound(t, r, 1024)
	s, err := b.NewSender(context.Background(), "x/y")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pub := publisher5(t, m.Addr())
	subscribed(t, func(p string) { publish5(t, pub, &paho.Publish{Topic: "x/probe", QoS: 1, Payload: []byte(p)}) }, in)
	bridgetest.SendAll(t, s, []*cloudevent.Event{sample()}, timeout)
	got := bridgetest.Next(t, in, timeout)
	if got.Event == nil {
		t.Fatalf("no event: %v", got.Err)
	}
	sameEvent(t, got.Event, sample(), &Message{Topic: "x/y", QoS: 2})
}

func TestMQTT311StructuredBothWays(t *testing.T) {
	m := brokertest.StartMosquitto(t, false)
	b := openBroker(t, m.URL(), bridge.FormatDefault, map[string]string{"protocol": "3.1.1"})
	r, err := b.NewReceiver(context.Background(), "s/+")
	if err != nil {
		t.Fatal(err)
	}
	in := bridgetest.Inbound(t, r, 1024)
	sub := subscriber5(t, m.Addr(), "test-sub", "s/1", 1, true)
	s, err := b.NewSender(context.Background(), "s/1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	subscribed(t, func(p string) { mosquittoPub(t, m.Addr(), "-V", "mqttv311", "-q", "1", "-t", "s/probe", "-m", p) }, in)
	bridgetest.SendAll(t, s, []*cloudevent.Event{sample()}, timeout)
	p := <-sub
	want, _ := cloudevent.Marshal(sample())
	if string(p.Payload) != string(want) {
		t.Fatalf("payload %s, want %s", p.Payload, want)
	}
	got := bridgetest.Next(t, in, timeout)
	if got.Event == nil {
		t.Fatalf("no event: %v", got.Err)
	}
	sameEvent(t, got.Event, sample(), &Message{Topic: "s/1", QoS: 1})
}

func TestMosquittoPubPlainMessageIsAnEvent(t *testing.T) {
	for _, proto := range []string{"5", "3.1.1"} {
		t.Run(proto, func(t *testing.T) {
			m := brokertest.StartMosquitto(t, false)
			r, err := openBroker(t, m.URL(), bridge.FormatDefault, map[string]string{"protocol": proto}).NewReceiver(context.Background(), "plain/#")
			if err != nil {
				t.Fatal(err)
			}
			in := bridgetest.Inbound(t, r, 1024)
			v := map[string]string{"5": "mqttv5", "3.1.1": "mqttv311"}[proto]
			subscribed(t, func(p string) { mosquittoPub(t, m.Addr(), "-V", v, "-q", "1", "-t", "plain/probe", "-m", p) }, in)
			mosquittoPub(t, m.Addr(), "-V", v, "-q", "1", "-t", "plain/a", "-m", "hello 1")
			mosquittoPub(t, m.Addr(), "-V", v, "-q", "1", "-t", "plain/a", "-m", `{"n":2}`)
			first, second := bridgetest.Next(t, in, timeout), bridgetest.Next(t, in, timeout)
			if first.Event == nil || second.Event == nil {
				t.Fatalf("not events: %v %v", first.Err, second.Err)
			}
			n1, _ := strconv.ParseInt(strings.TrimPrefix(first.Event.ID, "plain/a-"), 10, 64)
			n2, _ := strconv.ParseInt(strings.TrimPrefix(second.Event.ID, "plain/a-"), 10, 64)
			if n1 == 0 || n2 != n1+1 || first.Position != first.Event.ID {
				t.Fatalf("ids %q %q, position %q", first.Event.ID, second.Event.ID, first.Position)
			}
			e := second.Event
			if e.Source != "/mqtt/plain/a" || e.Type != bridge.FallbackType || e.DataContentType != bridge.ContentJSON ||
				first.Event.DataContentType != bridge.ContentText || e.Extensions[ExtTopic] != "plain/a" || e.Extensions[ExtQoS] != "1" {
				t.Fatalf("event %+v", e)
			}
			if at, err := cloudevent.ParseTime(e.Time); err != nil || time.Since(at) > time.Hour {
				t.Fatalf("time %q: %v", e.Time, err)
			}
		})
	}
}

func TestMalformedMessagesAreHandedOnWithAReasonAndTheStreamGoesOn(t *testing.T) {
	m := brokertest.StartMosquitto(t, false)
	r, err := openBroker(t, m.URL(), bridge.FormatBinary, nil).NewReceiver(context.Background(), "bad/#")
	if err != nil {
		t.Fatal(err)
	}
	in := bridgetest.Inbound(t, r, 1024)
	pub := publisher5(t, m.Addr())
	subscribed(t, func(p string) { publish5(t, pub, &paho.Publish{Topic: "bad/probe", QoS: 1, Payload: []byte(p)}) }, in)
	publish5(t, pub, &paho.Publish{Topic: "bad/json", QoS: 1, Payload: []byte(`{"specversion":"1.0",`),
		Properties: &paho.PublishProperties{ContentType: cloudevent.MediaType}})
	publish5(t, pub, &paho.Publish{Topic: "bad/ext", QoS: 1, Payload: []byte("x"), Properties: &paho.PublishProperties{
		User: paho.UserProperties{{Key: "specversion", Value: "1.0"}, {Key: "id", Value: "1"}, {Key: "source", Value: "/s"},
			{Key: "type", Value: "t"}, {Key: "Bad_Name", Value: "v"}}}})
	publish5(t, pub, &paho.Publish{Topic: "bad/fine", QoS: 1, Payload: []byte("fine")})
	for _, want := range []bridge.Reason{bridge.ReasonJSON, bridge.ReasonAttribute} {
		got := bridgetest.Next(t, in, timeout)
		if got.Event != nil || got.Reason != want || got.Err == nil || len(got.Payload) == 0 {
			t.Fatalf("got %+v, want reason %s", got, want)
		}
	}
	if got := bridgetest.Next(t, in, timeout); got.Event == nil || string(got.Event.Data) != "fine" {
		t.Fatalf("after the malformed ones: %+v", got)
	}
}

func TestRetainedMessagesPassOnlyWhenTheBridgeSaysSo(t *testing.T) {
	m := brokertest.StartMosquitto(t, false)
	// Out: a retaining bridge publishes retained messages.
	s, err := openBroker(t, m.URL(), bridge.FormatBinary, map[string]string{"retain": "true"}).NewSender(context.Background(), "ret/a")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bridgetest.SendAll(t, s, []*cloudevent.Event{sample()}, timeout)
	// In: a retaining receiver that subscribes afterwards reads it, marked.
	r, err := openBroker(t, m.URL(), bridge.FormatBinary, map[string]string{"retain": "true", "clientid": "keep"}).NewReceiver(context.Background(), "ret/#")
	if err != nil {
		t.Fatal(err)
	}
	got := bridgetest.Next(t, bridgetest.Inbound(t, r, 1024), timeout)
	if got.Event == nil || got.Event.ID != "e-1" || got.Event.Extensions[ExtRetained] != "true" {
		t.Fatalf("retained: %+v", got)
	}
	// A receiver that does not retain never sees it.
	r2, err := openBroker(t, m.URL(), bridge.FormatBinary, map[string]string{"clientid": "skip"}).NewReceiver(context.Background(), "ret/#")
	if err != nil {
		t.Fatal(err)
	}
	in2 := bridgetest.Inbound(t, r2, 1024)
	pub := publisher5(t, m.Addr())
	subscribed(t, func(p string) { publish5(t, pub, &paho.Publish{Topic: "ret/probe", QoS: 1, Payload: []byte(p)}) }, in2)
	select {
	case g := <-in2:
		t.Fatalf("non-retaining receiver read %+v", g)
	default:
	}
}
