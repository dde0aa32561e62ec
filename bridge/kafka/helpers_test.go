package kafka_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/internal/testport"
)

// cluster is a kfake cluster that can be restarted on the same port with
// the same data directory.
type cluster struct {
	t    testing.TB
	c    *kfake.Cluster
	port int
	dir  string
}

// startCluster starts a one-broker kfake cluster persisting to a temporary
// directory, closed at the end of the test.
func startCluster(t testing.TB) *cluster {
	t.Helper()
	_, port, release := testport.Hold(t)
	release()
	k := &cluster{t: t, port: port, dir: t.TempDir()}
	k.start()
	t.Cleanup(k.stop)
	return k
}

// start starts the cluster on its port, reloading what its directory holds.
func (k *cluster) start() {
	k.t.Helper()
	c, err := kfake.NewCluster(kfake.Ports(k.port), kfake.NumBrokers(1), kfake.DataDir(k.dir), kfake.SyncWrites(),
		kfake.ClusterID("rsbd-test"), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		k.t.Fatal(err)
	}
	k.c = c
}

// stop closes the cluster; it is idempotent.
func (k *cluster) stop() {
	if k.c != nil {
		k.c.Close()
		k.c = nil
	}
}

// addr returns the broker's address.
func (k *cluster) addr() string { return "127.0.0.1:" + strconv.Itoa(k.port) }

// config returns a Kafka bridge's configuration on k.
func (k *cluster) config(name string, f bridge.Format) bridge.Config {
	return bridge.Config{Settings: bridge.Settings{Name: name, Kind: "kafka", URL: k.addr(), Format: f,
		Options: map[string]string{"start": "earliest"}}}
}

// produce writes recs with a plain franz-go client.
func (k *cluster) produce(t testing.TB, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.addr()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// consume reads n records of topic from its start with a plain client.
func (k *cluster) consume(t testing.TB, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.addr()), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
	defer cancel()
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%d of %d records on %s", len(out), n, topic)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

// header returns the value of header key of r, or "".
func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
