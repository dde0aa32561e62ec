package amqp091

import (
	"context"
	"maps"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
	"github.com/rsbd/rsbd/cloudevent"
)

// busConfig is a bridge of kind rabbitmq with both routes: /out/ → queue
// q.out and q.in → /in/.
func busConfig(url, q string, f bridge.Format) bridge.Config {
	cfg := bridge.DefaultConfig()
	cfg.Settings = bridge.Settings{Name: "rb", Kind: Kind, URL: url, Format: f}
	cfg.Out = bridge.Route{Scope: "/out/", Address: q + ".out"}
	cfg.In = bridge.Route{Scope: "/in/", Address: q + ".in"}
	return cfg
}

// sameCE fails unless got is want with the given broker extensions.
func sameCE(t *testing.T, got, want *cloudevent.Event, ext map[string]string) {
	t.Helper()
	w := *want
	w.Extensions = maps.Clone(want.Extensions)
	maps.Copy(w.Extensions, ext)
	if got.ID != w.ID || got.Source != w.Source || got.Type != w.Type || got.Subject != w.Subject || got.Time != w.Time ||
		got.DataContentType != w.DataContentType || got.DataSchema != w.DataSchema || !maps.Equal(got.Extensions, w.Extensions) ||
		string(got.Data) != string(w.Data) {
		t.Fatalf("got  %+v\nwant %+v", got, &w)
	}
}

func TestRabbitMQBridgeBothWaysThroughTheBusInEveryFormat(t *testing.T) {
	node := brokertest.Shared(t)
	for _, f := range []bridge.Format{bridge.FormatBinary, bridge.FormatStructured, bridge.FormatFrame, bridge.FormatRaw} {
		t.Run(f.String(), func(t *testing.T) {
			q := queueName(t)
			ch := node.Channel091(t)
			declare(t, ch, q+".in")
			declare(t, ch, q+".out")
			const n = 30
			for i := range n {
				p, err := Encode(f, bridgetest.Event(i, 64))
				if err != nil {
					t.Fatal(err)
				}
				if err := ch.PublishWithContext(context.Background(), "", q+".in", false, false, p); err != nil {
					t.Fatal(err)
				}
			}
			bus := bridgetest.Bus(t)
			rd := bridgetest.Reader(t, bus, "/in/")
			inf := bridgetest.Informer(t, bus, "/out/")
			bridgetest.Run(t, bus, busConfig(node.URL091(), q, f), nil)
			ext := map[string]string{ExtRoutingKey: q + ".in", ExtRedelivered: "false"}
			for i := range n {
				_, e := bridgetest.ReadCE(t, rd)
				want := bridgetest.Event(i, 64)
				if f == bridge.FormatRaw {
					// Raw keeps the data and what the message says: its id,
					// nothing else.
					want = &cloudevent.Event{ID: want.ID, Source: "/rabbitmq/" + q + ".in", Type: bridge.FallbackType,
						Time: e.Time, DataContentType: want.DataContentType, Extensions: map[string]string{}, Data: want.Data}
				}
				sameCE(t, e, want, ext)
			}
			for i := range n {
				bridgetest.PublishCE(t, inf, bridgetest.Event(i, 64))
			}
			for i := range n {
				d := get(t, ch, q+".out")
				in := Delivery{Queue: q + ".out", RoutingKey: d.RoutingKey, MessageID: d.MessageId, ContentType: d.ContentType, Headers: d.Headers, Body: d.Body}
				e, err := Decode(&in, f, "x", bridgetest.At)
				if err != nil {
					t.Fatal(err)
				}
				if f == bridge.FormatRaw {
					if e.ID != bridgetest.Event(i, 64).ID || string(e.Data) != string(bridgetest.Event(i, 64).Data) {
						t.Fatalf("raw %d: %+v", i, e)
					}
					continue
				}
				sameCE(t, e, bridgetest.Event(i, 64), map[string]string{ExtRoutingKey: q + ".out", ExtRedelivered: "false"})
			}
		})
	}
}

func TestRabbitMQDeadLettersGoToABrokerQueue(t *testing.T) {
	node := brokertest.Shared(t)
	q := queueName(t)
	ch := node.Channel091(t)
	declare(t, ch, q+".in")
	for _, p := range []amqp.Publishing{
		{ContentType: cloudevent.MediaType, MessageId: "bad-1", Body: []byte(`{"specversion":"1.0",`)},
		{MessageId: "bad-2", Headers: amqp.Table{"cloudEvents:specversion": "1.0", "cloudEvents:id": "1", "cloudEvents:source": "/s",
			"cloudEvents:type": "t", "cloudEvents:Not-Valid": "v"}, Body: []byte("x")},
		{MessageId: "fine", Body: []byte("fine")},
	} {
		if err := ch.PublishWithContext(context.Background(), "", q+".in", false, false, p); err != nil {
			t.Fatal(err)
		}
	}
	bus := bridgetest.Bus(t)
	rd := bridgetest.Reader(t, bus, "/in/")
	cfg := busConfig(node.URL091(), q, bridge.FormatBinary)
	cfg.Out = bridge.Route{}
	cfg.DeadLetter = q + ".dead"
	declare(t, ch, q+".dead")
	metrics, _ := bridge.NewMetrics(nil)
	bridgetest.Run(t, bus, cfg, metrics)
	if _, e := bridgetest.ReadCE(t, rd); e.ID != "fine" {
		t.Fatalf("event %+v", e)
	}
	for _, want := range []struct{ id, reason string }{{"bad-1", "bad_json"}, {"bad-2", "bad_attribute"}} {
		d := get(t, ch, q+".dead")
		if d.Headers["cloudEvents:"+bridge.ExtDeadLetterReason] != want.reason || d.MessageId != want.id {
			t.Fatalf("dead letter %+v, want %v", d, want)
		}
	}
	if v := bridgetest.Value(metrics.DeadLetters, "rb", bridge.DirIn); v != 2 {
		t.Fatalf("dead letters counted %v", v)
	}
}
