package amqp1

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
	"github.com/rsbd/rsbd/cloudevent"
)

// timeout bounds every wait of these tests: generous, the host is loaded.
const timeout = 60 * time.Second

func TestMain(m *testing.M) { brokertest.Main(m) }

// queue returns an address of RabbitMQ's AMQP 1.0 plugin for the test.
func queue(t *testing.T, suffix string) string {
	return "/queue/" + strings.ReplaceAll(t.Name(), "/", ".") + suffix
}

// session opens a plain AMQP 1.0 session of the test.
func session(t testing.TB, url string) *amqp.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := amqp.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// send sends messages to address with a plain sender. Its link stays
// attached until the connection closes: RabbitMQ's plugin does not always
// answer a detach.
func send(t *testing.T, s *amqp.Session, address string, msgs ...*amqp.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	snd, err := s.NewSender(ctx, address, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := snd.Send(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// receiveN reads n messages of address with a plain receiver.
func receiveN(t *testing.T, s *amqp.Session, address string, n int) []*amqp.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r, err := s.NewReceiver(ctx, address, &amqp.ReceiverOptions{Credit: 64})
	if err != nil {
		t.Fatal(err)
	}
	var out []*amqp.Message
	for len(out) < n {
		m, err := r.Receive(ctx, nil)
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", len(out), n, err)
		}
		if err := r.AcceptMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// busConfig is a bridge of kind amqp with both routes.
func busConfig(url, in, out string, f bridge.Format) bridge.Config {
	cfg := bridge.DefaultConfig()
	cfg.Settings = bridge.Settings{Name: "am", Kind: Kind, URL: url, Format: f}
	cfg.Out = bridge.Route{Scope: "/out/", Address: out}
	cfg.In = bridge.Route{Scope: "/in/", Address: in}
	return cfg
}

func TestAMQP1BridgeBothWaysThroughTheBus(t *testing.T) {
	node := brokertest.Shared(t)
	for _, f := range []bridge.Format{bridge.FormatBinary, bridge.FormatStructured, bridge.FormatFrame} {
		t.Run(f.String(), func(t *testing.T) {
			in, out := queue(t, ".in"), queue(t, ".out")
			s := session(t, node.URL10())
			const n = 30
			msgs := make([]*amqp.Message, n)
			for i := range n {
				m, err := Encode(f, bridgetest.Event(i, 64))
				if err != nil {
					t.Fatal(err)
				}
				msgs[i] = m
			}
			send(t, s, in, msgs...)
			bus := bridgetest.Bus(t)
			rd := bridgetest.Reader(t, bus, "/in/")
			inf := bridgetest.Informer(t, bus, "/out/")
			bridgetest.Run(t, bus, busConfig(node.URL10(), in, out, f), nil)
			for i := range n {
				_, e := bridgetest.ReadCE(t, rd)
				sameEvent(t, e, bridgetest.Event(i, 64), in)
			}
			for i := range n {
				bridgetest.PublishCE(t, inf, bridgetest.Event(i, 64))
			}
			for i, m := range receiveN(t, s, out, n) {
				if f == bridge.FormatBinary && (m.ApplicationProperties["cloudEvents_datacontenttype"] != "application/json" ||
					m.Properties.GroupID != nil) {
					t.Fatalf("message %d: %+v", i, m.ApplicationProperties)
				}
				e, err := Decode(m, out, f, "x", bridgetest.At)
				if err != nil {
					t.Fatal(err)
				}
				sameEvent(t, e, bridgetest.Event(i, 64), out)
			}
		})
	}
}

func TestAMQP1PlainMessagesMalformedOnesAndPartitionKey(t *testing.T) {
	node := brokertest.Shared(t)
	in := queue(t, ".in")
	s := session(t, node.URL10())
	st := cloudevent.MediaType
	withPK := bridgetest.Sample()
	pk, _ := Encode(bridge.FormatBinary, withPK)
	send(t, s, in,
		&amqp.Message{Properties: &amqp.MessageProperties{MessageID: "plain-7"}, Data: [][]byte{[]byte("hello")}},
		&amqp.Message{Properties: &amqp.MessageProperties{ContentType: &st, MessageID: "bad-1"}, Data: [][]byte{[]byte(`{"specversion":`)}},
		&amqp.Message{Properties: &amqp.MessageProperties{MessageID: "bad-2"}, Data: [][]byte{[]byte("x")}, ApplicationProperties: map[string]any{
			"cloudEvents_specversion": "1.0", "cloudEvents_id": "1", "cloudEvents_source": "/s", "cloudEvents_type": "t", "cloudEvents_Not-Valid": "v"}},
		pk)
	bus := bridgetest.Bus(t)
	rd := bridgetest.Reader(t, bus, "/in/")
	deadRd := bridgetest.Reader(t, bus, "/dead/")
	cfg := busConfig(node.URL10(), in, "", bridge.FormatBinary)
	cfg.Out = bridge.Route{}
	cfg.DeadLetter = "/dead/"
	metrics, _ := bridge.NewMetrics(nil)
	bridgetest.Run(t, bus, cfg, metrics)
	_, plain := bridgetest.ReadCE(t, rd)
	want := &cloudevent.Event{ID: "plain-7", Source: "/amqp" + in, Type: bridge.FallbackType, Time: plain.Time,
		DataContentType: bridge.ContentText, Data: []byte("hello")}
	sameEvent(t, plain, want, in)
	_, e := bridgetest.ReadCE(t, rd)
	sameEvent(t, e, withPK, in)
	for i, reason := range []string{"bad_json", "bad_attribute"} {
		_, dl := bridgetest.ReadCE(t, deadRd)
		if dl.ID != "bad-"+strconv.Itoa(i+1) || dl.Extensions[bridge.ExtDeadLetterReason] != reason {
			t.Fatalf("dead letter %d: %+v", i, dl)
		}
	}
	if v := bridgetest.Value(metrics.DeadLetters, "am", bridge.DirIn); v != 2 {
		t.Fatalf("dead letters counted %v", v)
	}
}

func TestAMQP1DeadLettersGoToABrokerQueue(t *testing.T) {
	node := brokertest.Shared(t)
	in, dead := queue(t, ".in"), queue(t, ".dead")
	s := session(t, node.URL10())
	st := cloudevent.MediaType
	send(t, s, in,
		&amqp.Message{Properties: &amqp.MessageProperties{ContentType: &st, MessageID: "bad-1"}, Data: [][]byte{[]byte(`{"specversion":`)}},
		&amqp.Message{Properties: &amqp.MessageProperties{MessageID: "fine"}, Data: [][]byte{[]byte("fine")}})
	bus := bridgetest.Bus(t)
	rd := bridgetest.Reader(t, bus, "/in/")
	cfg := busConfig(node.URL10(), in, "", bridge.FormatBinary)
	cfg.Out = bridge.Route{}
	cfg.DeadLetter = bridge.DeadLetterBrokerPrefix + dead
	metrics, _ := bridge.NewMetrics(nil)
	bridgetest.Run(t, bus, cfg, metrics)
	if _, e := bridgetest.ReadCE(t, rd); e.ID != "fine" {
		t.Fatalf("event %+v", e)
	}
	m := receiveN(t, s, dead, 1)[0]
	if m.ApplicationProperties["cloudEvents_"+bridge.ExtDeadLetterReason] != "bad_json" || MessageID(m) != "bad-1" {
		t.Fatalf("dead letter %+v %+v", m.Properties, m.ApplicationProperties)
	}
	if v := bridgetest.Value(metrics.DeadLetters, "am", bridge.DirIn); v != 1 {
		t.Fatalf("dead letters counted %v", v)
	}
}
