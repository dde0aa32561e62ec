package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/config"
	"github.com/rsbd/rsbd/internal/testutil"
)

// Bridge sections of a file and the environment become the daemon's
// bridges, sorted by name; other keys are the broker's options.
func TestBridgeSettings(t *testing.T) {
	file := "[bridge.orders]\nkind = kafka\nurl = 127.0.0.1:9092\nformat = structured\nout.scope = /orders/\n" +
		"out.address = orders\ndeadletter = orders-dlq\ngroup = g1\nqueue = 100\n"
	s, c := mustSettings(t, file, []string{"RSB_BRIDGE_CACHE_KIND=redis", "RSB_BRIDGE_CACHE_URL=redis://127.0.0.1:6379",
		"RSB_BRIDGE_CACHE_IN_ADDRESS=events", "RSB_BRIDGE_CACHE_IN_SCOPE=/cache/"})
	want := []bridge.Config{
		{Settings: bridge.Settings{Name: "cache", Kind: "redis", URL: "redis://127.0.0.1:6379", Options: map[string]string{}},
			In: bridge.Route{Scope: "/cache/", Address: "events"}},
		{Settings: bridge.Settings{Name: "orders", Kind: "kafka", URL: "127.0.0.1:9092", Format: bridge.FormatStructured,
			Options: map[string]string{"group": "g1"}}, Out: bridge.Route{Scope: "/orders/", Address: "orders"},
			DeadLetter: "orders-dlq", QueueLen: 100},
	}
	if !reflect.DeepEqual(s.bridges, want) {
		t.Fatalf("bridges\n got %+v\nwant %+v", s.bridges, want)
	}
	if u := unknownKeys(c); len(u) != 0 {
		t.Errorf("unknown keys %q", u)
	}
}

// Every invalid bridge is a configuration error naming its key.
func TestBridgeSettingsInvalid(t *testing.T) {
	for _, tt := range []struct{ file, want string }{
		{"[bridge.a]\nkind = nosuch\nin.scope = /a/\nin.address = t\n", "unknown broker kind"},
		{"[bridge.a]\nkind = kafka\nurl = h:1\nin.scope = /a/\nin.address = t\nformat = xml\n", "bridge.a.format"},
		{"[bridge.a]\nkind = kafka\nurl = h:1\nin.scope = /a/\nin.address = t\ncolour = red\n", `unknown key "colour"`},
		{"[bridge.a]\nkind = kafka\nurl = h:1\n", "neither an in nor an out route"},
		{"[bridge.a]\nkind = redis\nurl = redis://h:1\nmode = pubsub\nformat = binary\nin.scope = /a/\nin.address = c\n", "format binary not supported"},
		{"[bridge]\nkind = kafka\n", "bridge.kind"},
	} {
		c, err := load(t, tt.file, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = parseSettings(c)
		if !errors.Is(err, config.ErrBadValue) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want an error with %q", tt.file, err, tt.want)
		}
	}
	env := []string{"RSB_BRIDGE_A_KIND=kafka", "RSB_BRIDGE_A_URL=h:1", "RSB_BRIDGE_A_OUT_SCOPE=/a/"}
	code, stdout, _ := runArgs(t, nil, env, "--print-config")
	if code != exitUsage || !strings.Contains(stdout, "bridge.a.kind = kafka  # env RSB_BRIDGE_A_KIND") || !strings.Contains(stdout, "# error: ") {
		t.Errorf("--print-config exit %d:\n%s", code, stdout)
	}
}

// A CloudEvent produced to Kafka crosses rsbd to NATS and to a Redis
// stream with every attribute kept; /readyz reports a bridge whose broker
// went away.
func TestBridgesCrossBrokers(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	kaddr := kc.ListenAddrs()[0]
	ns := bridgetest.StartServer(t, "nats-server", "nats-server", func(port, _ string) []string {
		return []string{"-a", "127.0.0.1", "-p", port}
	})
	rs := bridgetest.StartServer(t, "redis-server", "redis-server", func(port, dir string) []string {
		return []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}
	})
	nc, err := nats.Connect("nats://" + ns.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("from.kafka")
	if err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	env := []string{
		"RSB_BRIDGE_K_KIND=kafka", "RSB_BRIDGE_K_URL=" + kaddr, "RSB_BRIDGE_K_START=earliest",
		"RSB_BRIDGE_K_IN_ADDRESS=ce", "RSB_BRIDGE_K_IN_SCOPE=/x/",
		"RSB_BRIDGE_N_KIND=nats", "RSB_BRIDGE_N_URL=nats://" + ns.Addr(), "RSB_BRIDGE_N_OUT_SCOPE=/x/", "RSB_BRIDGE_N_OUT_ADDRESS=from.kafka",
		"RSB_BRIDGE_R_KIND=redis", "RSB_BRIDGE_R_URL=redis://" + rs.Addr(), "RSB_BRIDGE_R_OUT_SCOPE=/x/", "RSB_BRIDGE_R_OUT_ADDRESS=from-kafka",
	}
	d := startServingEnv(t, filepath.Join(t.TempDir(), "ready.json"), env)
	defer func() {
		d.signals <- syscall.SIGTERM
		<-d.done
	}()
	readyz := func() (int, string) {
		resp, err := http.Get("http://" + d.info.Metrics + "/readyz")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	testutil.WaitFor(t, bridgetest.Timeout, "ready", func() bool { c, _ := readyz(); return c == http.StatusOK })

	e := bridgetest.Event(42, 200)
	e.Extensions["partitionkey"] = "pk-1"
	rec := &kgo.Record{Topic: "ce", Key: []byte("pk-1"), Value: e.Data}
	attrs, ct := bridge.BinaryAttrs(e, "ce_")
	for _, a := range attrs {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: a.Name, Value: []byte(a.Value)})
	}
	rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: "content-type", Value: []byte(ct)})
	cl, err := kgo.NewClient(kgo.SeedBrokers(kaddr), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{}
	for _, a := range e.Attrs() {
		want[a.Name] = a.Value
	}
	m, err := sub.NextMsg(bridgetest.Timeout)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range want {
		got := m.Header.Get("ce-" + name)
		if name == "datacontenttype" {
			got = m.Header.Get("content-type")
		}
		if got != v {
			t.Errorf("NATS %s = %q, want %q", name, got, v)
		}
	}
	if m.Header.Get("ce-kafkatopic") != "ce" || m.Header.Get("ce-kafkaoffset") != "0" || string(m.Data) != string(e.Data) {
		t.Errorf("NATS message %v %s", m.Header, m.Data)
	}
	rc := goredis.NewClient(&goredis.Options{Addr: rs.Addr()})
	defer rc.Close()
	var entry map[string]any
	testutil.WaitFor(t, bridgetest.Timeout, "Redis entry", func() bool {
		es, err := rc.XRange(context.Background(), "from-kafka", "-", "+").Result()
		if err == nil && len(es) == 1 {
			entry = es[0].Values
		}
		return entry != nil
	})
	for name, v := range want {
		key := "ce_" + name
		if name == "datacontenttype" {
			key = "content-type"
		}
		if entry[key] != v {
			t.Errorf("Redis %s = %v, want %q", name, entry[key], v)
		}
	}
	if entry["data"] != string(e.Data) || entry["ce_kafkapartition"] != "0" {
		t.Errorf("Redis entry %v", entry)
	}

	rs.Stop() // the Redis route is idle: its probe finds the server gone
	testutil.WaitFor(t, bridgetest.Timeout, "readyz 503 naming the bridge", func() bool {
		c, body := readyz()
		return c == http.StatusServiceUnavailable && strings.Contains(body, "bridge r out")
	})
}
