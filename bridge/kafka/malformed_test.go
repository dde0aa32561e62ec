package kafka_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/internal/testutil"
)

func TestMalformedToDeadLetterOrDropped(t *testing.T) {
	k := startCluster(t)
	bus := bridgetest.Bus(t)
	good := record(t, bridge.FormatStructured, "mixed", bridgetest.Event(1, 10))
	k.produce(t, &kgo.Record{Topic: "mixed", Value: []byte(`{"specversion":"1.0","id":`),
		Headers: []kgo.RecordHeader{{Key: "content-type", Value: []byte("application/cloudevents+json")}}},
		&kgo.Record{Topic: "mixed", Value: []byte("x"), Headers: []kgo.RecordHeader{
			{Key: "ce_specversion", Value: []byte("1.0")}, {Key: "ce_id", Value: []byte("a")}, {Key: "ce_source", Value: []byte("/s")},
			{Key: "ce_type", Value: []byte("t")}, {Key: "ce_Bad-Name", Value: []byte("v")}}},
		good)
	m, _ := bridge.NewMetrics(nil)
	rd := bridgetest.Reader(t, bus, "/mixed/")

	withDL := k.config("dl", bridge.FormatBinary)
	withDL.In = bridge.Route{Scope: "/mixed/", Address: "mixed"}
	withDL.DeadLetter = "mixed-dlq"
	bridgetest.Run(t, bus, withDL, m)
	if _, e := bridgetest.ReadCE(t, rd); e.ID != "ev-1" {
		t.Fatalf("good event after the bad ones: %+v", e)
	}
	dl := k.consume(t, "mixed-dlq", 2)
	if header(dl[0], "ce_deadletterreason") != "bad_json" || header(dl[0], "ce_id") != "mixed-0-0" ||
		header(dl[1], "ce_deadletterreason") != "bad_attribute" || header(dl[1], "ce_id") != "mixed-0-1" {
		t.Errorf("dead letters %+v %+v", dl[0].Headers, dl[1].Headers)
	}

	drop := k.config("drop", bridge.FormatBinary)
	drop.In = bridge.Route{Scope: "/mixed/", Address: "mixed"}
	bridgetest.Run(t, bus, drop, m)
	if _, e := bridgetest.ReadCE(t, rd); e.ID != "ev-1" {
		t.Fatalf("good event: %+v", e)
	}
	testutil.WaitFor(t, bridgetest.Timeout, "drops counted", func() bool {
		return bridgetest.Value(m.Drops, "drop", bridge.DirIn, "bad_json") == 1 &&
			bridgetest.Value(m.Drops, "drop", bridge.DirIn, "bad_attribute") == 1
	})
	if v := bridgetest.Value(m.DeadLetters, "dl", bridge.DirIn); v != 2 {
		t.Errorf("dead letters counted %v, want 2", v)
	}
}
