package bridgetest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/scope"
)

// Bus returns a bus embedded in a fresh in-process node, closed at the end
// of the test.
func Bus(t testing.TB) *client.Bus {
	t.Helper()
	n := clienttest.StartNodes(t, 1)[0]
	bus := client.Embedded(n)
	t.Cleanup(func() { _ = bus.Close() })
	return bus
}

// Run makes and starts the bridge of cfg on bus with metrics m (nil: its
// own), closed at the end of the test. Zero back-off settings are made
// short, so tests recover quickly.
func Run(t testing.TB, bus *client.Bus, cfg bridge.Config, m *bridge.Metrics) *bridge.Bridge {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = clienttest.Logger()
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 20 * time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 500 * time.Millisecond
	}
	b, err := bridge.New(bus, cfg, m)
	if err != nil {
		t.Fatalf("bridge %s: %v", cfg.Name, err)
	}
	b.Start()
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// ExtSeq is the extension Event numbers its events with.
const ExtSeq = "seq"

// Event returns a CloudEvent numbered i (extension seq, id "ev-<i>") with
// a JSON payload of at least size bytes.
func Event(i, size int) *cloudevent.Event {
	data := fmt.Appendf(nil, `{"n":%d,"pad":"`, i)
	for len(data) < size-2 {
		data = append(data, 'x')
	}
	data = append(data, `"}`...)
	return &cloudevent.Event{
		ID: "ev-" + strconv.Itoa(i), Source: "/test/source", Type: "com.example.test",
		Subject: "item-" + strconv.Itoa(i), Time: "2026-01-02T03:04:05.123456Z",
		DataContentType: "application/json", DataSchema: "https://example.com/schema",
		Extensions: map[string]string{ExtSeq: strconv.Itoa(i), "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		Data:       data,
	}
}

// Seq returns the seq extension of e, or -1.
func Seq(e *cloudevent.Event) int {
	n, err := strconv.Atoi(e.Extensions[ExtSeq])
	if err != nil {
		return -1
	}
	return n
}

// Reader returns a reader of sc and its sub-scopes, closed at the end of
// the test.
func Reader(t testing.TB, bus *client.Bus, sc string) *client.Reader {
	t.Helper()
	rd, err := bus.NewReader(scope.MustParse(sc), client.WithQueue(1<<16, client.DropNewest))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rd.Close() })
	return rd
}

// ReadCE reads the next event from rd as the CloudEvent an outbound
// bridge would send (bridge.FromBus, for no bridge), within Timeout.
func ReadCE(t testing.TB, rd *client.Reader) (*client.Event, *cloudevent.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	ev, err := rd.Read(ctx)
	if err != nil {
		t.Fatalf("reading the bus: %v", err)
	}
	e, err := bridge.FromBus(&ev.Event, "")
	if err != nil {
		t.Fatalf("event %s: %v", ev.ID, err)
	}
	return ev, e
}

// Informer returns an informer on sc, closed at the end of the test.
func Informer(t testing.TB, bus *client.Bus, sc string) *client.Informer {
	t.Helper()
	inf, err := bus.NewInformer(scope.MustParse(sc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inf.Close() })
	return inf
}

// PublishCE publishes e on the informer's scope as an inbound bridge
// would, but without a bridge's marker.
func PublishCE(t testing.TB, inf *client.Informer, e *cloudevent.Event) {
	t.Helper()
	ev, err := bridge.ToBus(e, inf.Scope(), "")
	if err != nil {
		t.Fatal(err)
	}
	if ev.WireSchema == "" && len(ev.Data) > 0 {
		ev.WireSchema = bridge.ContentJSON
	}
	if err := inf.PublishEvent(context.Background(), &client.Event{Event: *ev}); err != nil {
		t.Fatal(err)
	}
}

// Value returns the value of the metric of c with the given labels (0
// when it has none yet).
func Value(c prometheus.Collector, labels ...string) float64 {
	ch := make(chan prometheus.Metric, 64)
	go func() { c.Collect(ch); close(ch) }()
	total := 0.0
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) != nil || !match(d.GetLabel(), labels) {
			continue
		}
		switch {
		case d.Counter != nil:
			total += d.Counter.GetValue()
		case d.Gauge != nil:
			total += d.Gauge.GetValue()
		}
	}
	return total
}

// match reports whether the label pairs have the values want, in label
// order (bridge, direction, reason).
func match(pairs []*dto.LabelPair, want []string) bool {
	if len(want) > len(pairs) {
		return false
	}
	for i, w := range want {
		if pairs[i].GetValue() != w {
			return false
		}
	}
	return true
}
