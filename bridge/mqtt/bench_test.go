package mqtt

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
)

// benchPublish publishes n binary events of BenchSize at QoS 1 with
// autopaho, each acknowledged before the next, as the bridge does.
func benchPublish(b *testing.B, cm *autopaho.ConnectionManager, topic string, n int) {
	for i := range n {
		var m Message
		if err := Encode(&m, bridge.FormatBinary, bridgetest.Event(i, bridgetest.BenchSize), true); err != nil {
			b.Fatal(err)
		}
		p := &paho.Publish{Topic: topic, QoS: 1, Payload: m.Payload, Properties: &paho.PublishProperties{ContentType: m.ContentType}}
		for _, u := range m.User {
			p.Properties.User.Add(u.Key, u.Value)
		}
		if _, err := cm.Publish(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOut: bus → mosquitto through the bridge (MQTT 5, binary, QoS
// 1), beside autopaho publishing the same messages directly.
func BenchmarkOut(b *testing.B) {
	b.Run("bridge", func(b *testing.B) {
		m := brokertest.StartMosquitto(b, false)
		cfg := bridge.DefaultConfig()
		cfg.Settings = bridge.Settings{Name: "bench-out", Kind: Kind, URL: m.URL(), Format: bridge.FormatBinary}
		cfg.Out = bridge.Route{Scope: "/bench/", Address: "bench/out"}
		bridgetest.BenchOut(b, bridgetest.Bus(b), cfg)
	})
	b.Run("direct", func(b *testing.B) {
		m := brokertest.StartMosquitto(b, false)
		pub := publisher5(b, m.Addr())
		bridgetest.Direct(b, func(n int) { benchPublish(b, pub, "bench/out", n) })
	})
}

// BenchmarkIn: mosquitto → bus through the bridge (the receiver's
// persistent session holds the messages published before it starts),
// beside an autopaho subscriber reading them directly.
func BenchmarkIn(b *testing.B) {
	b.Run("bridge", func(b *testing.B) {
		m := brokertest.StartMosquitto(b, false)
		cfg := bridge.DefaultConfig()
		cfg.Settings = bridge.Settings{Name: "bench-in", Kind: Kind, URL: m.URL(), Format: bridge.FormatBinary, Options: map[string]string{"clientid": "bench"}}
		cfg.In = bridge.Route{Scope: "/bench/", Address: "bench/in"}
		// Create the receiver's session, then leave it: the broker keeps
		// what is published for it.
		c, err := configOf(cfg.Settings)
		if err != nil {
			b.Fatal(err)
		}
		r, err := newReceiver5(&c, "bench/in", quiet)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		if err := r.conn.await(ctx); err != nil {
			b.Fatal(err)
		}
		cancel()
		pub := publisher5(b, m.Addr())
		probe := make(chan struct{})
		go func() {
			r.Receive(context.Background(), func(context.Context, bridge.Message) error { close(probe); return bridge.ErrClosed })
		}()
		for ready := false; !ready; {
			benchPublish(b, pub, "bench/in", 1)
			select {
			case <-probe:
				ready = true
			case <-time.After(200 * time.Millisecond):
			}
		}
		_ = r.Close()
		bridgetest.BenchIn(b, bridgetest.Bus(b), cfg, func(n int) { benchPublish(b, pub, "bench/in", n) })
	})
	b.Run("direct", func(b *testing.B) {
		m := brokertest.StartMosquitto(b, false)
		pub := publisher5(b, m.Addr())
		// A persistent session subscribed, then left, holds the messages
		// published before the timed part, as the bridge's does.
		got := make(chan struct{}, 1<<20)
		session := func() *autopaho.ConnectionManager {
			u, _ := url.Parse(m.URL())
			cm, err := autopaho.NewConnection(context.Background(), autopaho.ClientConfig{
				ServerUrls: []*url.URL{u}, KeepAlive: 20, SessionExpiryInterval: 600,
				OnConnectionUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
					go func() {
						_, _ = cm.Subscribe(context.Background(), &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "bench/in", QoS: 1}}})
					}()
				},
				ClientConfig: paho.ClientConfig{ClientID: "bench-direct", OnPublishReceived: []func(paho.PublishReceived) (bool, error){
					func(paho.PublishReceived) (bool, error) { got <- struct{}{}; return true, nil }}},
			})
			if err != nil {
				b.Fatal(err)
			}
			return cm
		}
		cm := session()
		for ready := false; !ready; {
			benchPublish(b, pub, "bench/in", 1)
			select {
			case <-got:
				ready = true
			case <-time.After(200 * time.Millisecond):
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		_ = cm.Disconnect(ctx)
		cancel()
		for len(got) > 0 {
			<-got
		}
		benchPublish(b, pub, "bench/in", b.N)
		bridgetest.Direct(b, func(n int) {
			cm := session()
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				_ = cm.Disconnect(ctx)
			}()
			for range n {
				<-got
			}
		})
	})
}
