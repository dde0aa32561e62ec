package mqtt

import (
	"context"
	"testing"

	"github.com/eclipse/paho.golang/paho"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
)

// busConfig is a bridge of kind mqtt with both routes: /out/ → rsbd/out
// and rsbd/in → /in/.
func busConfig(t *testing.T, url string, f bridge.Format, opts map[string]string) bridge.Config {
	cfg := bridge.DefaultConfig()
	cfg.Settings = bridge.Settings{Name: "mq", Kind: Kind, URL: url, Format: f, Options: opts}
	cfg.Out = bridge.Route{Scope: "/out/", Address: "rsbd/out"}
	cfg.In = bridge.Route{Scope: "/in/", Address: "rsbd/in"}
	return cfg
}

// sameCE fails unless got is want with the broker extensions of topic.
func sameCE(t *testing.T, got, want *cloudevent.Event, topic string, qos string) {
	t.Helper()
	bridgetest.SameEvent(t, got, want, map[string]string{ExtTopic: topic, ExtQoS: qos})
}

func TestMQTTBridgeBothWaysThroughTheBusInEveryFormat(t *testing.T) {
	for _, tc := range []struct {
		name, proto string
		f           bridge.Format
	}{
		{"5 binary", "5", bridge.FormatBinary},
		{"5 structured", "5", bridge.FormatStructured},
		{"3.1.1 structured", "3.1.1", bridge.FormatStructured},
		{"5 frame", "5", bridge.FormatFrame},
		{"3.1.1 frame", "3.1.1", bridge.FormatFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := brokertest.StartMosquitto(t, false)
			bus := bridgetest.Bus(t)
			sub := subscriber5(t, m.Addr(), "test-sub", "rsbd/out", 1, true)
			rd := bridgetest.Reader(t, bus, "/in/")
			inf := bridgetest.Informer(t, bus, "/out/")
			bridgetest.Run(t, bus, busConfig(t, m.URL(), tc.f, map[string]string{"protocol": tc.proto}), nil)
			pub := publisher5(t, m.Addr())
			const n = 20
			// In: the broker's messages, encoded by a producer in the format.
			probe := func(i int) {
				var msg Message
				if err := Encode(&msg, tc.f, bridgetest.Event(i, 64), tc.proto == "5"); err != nil {
					t.Fatal(err)
				}
				p := &paho.Publish{Topic: "rsbd/in", QoS: 1, Payload: msg.Payload, Properties: &paho.PublishProperties{ContentType: msg.ContentType}}
				for _, u := range msg.User {
					p.Properties.User.Add(u.Key, u.Value)
				}
				publish5(t, pub, p)
			}
			// The receiver subscribes asynchronously: publish event 0 until it
			// arrives, then the rest.
			var first *cloudevent.Event
			testutil.WaitFor(t, timeout, "the bridge's subscription", func() bool {
				probe(0)
				ctx, cancel := context.WithTimeout(context.Background(), 300e6)
				defer cancel()
				ev, err := rd.Read(ctx)
				if err != nil {
					return false
				}
				first, err = bridge.FromBus(&ev.Event, "")
				return err == nil
			})
			sameCE(t, first, bridgetest.Event(0, 64), "rsbd/in", "1")
			for i := 1; i < n; i++ {
				probe(i)
			}
			for i := 1; i < n; i++ {
				_, e := bridgetest.ReadCE(t, rd)
				if bridgetest.Seq(e) == 0 {
					i--
					continue
				}
				sameCE(t, e, bridgetest.Event(i, 64), "rsbd/in", "1")
			}
			// Out: events published on the bus reach the broker in order.
			for i := range n {
				bridgetest.PublishCE(t, inf, bridgetest.Event(i, 64))
			}
			for i := range n {
				p := <-sub
				msg := Message{Topic: p.Topic, QoS: p.QoS, Payload: p.Payload}
				if p.Properties != nil {
					msg.ContentType = p.Properties.ContentType
					for _, u := range p.Properties.User {
						msg.User = append(msg.User, UserProperty{u.Key, u.Value})
					}
				}
				e, err := Decode(&msg, tc.f, "x", bridgetest.At)
				if err != nil {
					t.Fatal(err)
				}
				want := bridgetest.Event(i, 64)
				sameCE(t, e, want, "rsbd/out", "1")
			}
		})
	}
}
