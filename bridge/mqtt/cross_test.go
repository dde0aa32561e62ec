package mqtt

import (
	"context"
	"testing"

	"github.com/eclipse/paho.golang/paho"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/bridge/internal/brokertest"
	_ "github.com/rsbd/rsbd/bridge/kafka" // registers kind kafka
	"github.com/rsbd/rsbd/internal/testutil"
)

// TestKafkaToMQTTThroughRsbdKeepsEveryAttribute: a CloudEvent produced
// on Kafka in binary mode crosses a Kafka bridge in, the bus, and an MQTT
// bridge out, and arrives on mosquitto as an MQTT 5 binary message with
// id, source, type, subject, time, datacontenttype, dataschema, data and
// every extension unchanged, plus what Kafka said (kafkatopic, ...).
func TestKafkaToMQTTThroughRsbdKeepsEveryAttribute(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	m := brokertest.StartMosquitto(t, false)
	sub := subscriber5(t, m.Addr(), "test-cross", "cross/out", 1, true)
	bus := bridgetest.Bus(t)

	want := bridgetest.Event(7, 100)
	rec := &kgo.Record{Topic: "ce-in", Key: []byte("k"), Value: want.Data}
	attrs, ct := bridge.BinaryAttrs(want, "ce_")
	for _, a := range attrs {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: a.Name, Value: []byte(a.Value)})
	}
	rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: "content-type", Value: []byte(ct)})
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// The way out first: an event the Kafka bridge puts on the bus before
	// anything reads /cross/ reaches no one.
	out := bridge.DefaultConfig()
	out.Settings = bridge.Settings{Name: "to-mqtt", Kind: Kind, URL: m.URL(), Format: bridge.FormatBinary}
	out.Out = bridge.Route{Scope: "/cross/", Address: "cross/out"}
	ob := bridgetest.Run(t, bus, out, nil)
	testutil.WaitFor(t, bridgetest.Timeout, "the MQTT bridge up", func() bool { return ob.Ready() == nil })
	in := bridge.DefaultConfig()
	in.Settings = bridge.Settings{Name: "from-kafka", Kind: "kafka", URL: kc.ListenAddrs()[0], Format: bridge.FormatBinary,
		Options: map[string]string{"start": "earliest"}}
	in.In = bridge.Route{Scope: "/cross/", Address: "ce-in"}
	bridgetest.Run(t, bus, in, nil)

	var p *paho.Publish
	select {
	case p = <-sub:
	case <-timeAfter():
		t.Fatal("nothing reached mosquitto")
	}
	msg := Message{Topic: p.Topic, QoS: p.QoS, ContentType: p.Properties.ContentType, Payload: p.Payload}
	for _, u := range p.Properties.User {
		msg.User = append(msg.User, UserProperty{u.Key, u.Value})
	}
	got, err := Decode(&msg, bridge.FormatBinary, "x", bridgetest.At)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != want.ID || got.Source != want.Source || got.Type != want.Type || got.Subject != want.Subject ||
		got.Time != want.Time || got.DataContentType != want.DataContentType || got.DataSchema != want.DataSchema ||
		string(got.Data) != string(want.Data) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	for name, v := range want.Extensions {
		if got.Extensions[name] != v {
			t.Errorf("extension %s: %q, want %q", name, got.Extensions[name], v)
		}
	}
	for name, v := range map[string]string{"kafkatopic": "ce-in", "kafkapartition": "0", "kafkaoffset": "0", ExtTopic: "cross/out"} {
		if got.Extensions[name] != v {
			t.Errorf("extension %s: %q, want %q (all: %v)", name, got.Extensions[name], v, got.Extensions)
		}
	}
}
