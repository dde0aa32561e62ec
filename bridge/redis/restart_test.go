package redis_test

import (
	"context"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/internal/testutil"
)

func TestStreamRestartLosesNothing(t *testing.T) {
	s := startServer(t)
	m, _ := bridge.NewMetrics(nil)
	out := config(s, "r-out", "stream", bridge.FormatBinary)
	out.Out = bridge.Route{Scope: "/rs/", Address: "restart"}
	in := config(s, "r-in", "stream", bridge.FormatBinary)
	in.In = bridge.Route{Scope: "/back/", Address: "restart"}
	const half = 100
	seen := bridgetest.RoundTripAcrossRestart(t, s, out, in, m, half)
	c := client(t, s)
	n, err := c.XLen(context.Background(), "restart").Result()
	if err != nil || n < 2*half {
		t.Fatalf("stream holds %d entries (%v), want at least %d", n, err, 2*half)
	}
	t.Logf("%d events through the stream across the restart (%d entries); out: %v retries; in: %v reconnects", len(seen), n,
		bridgetest.Value(m.Retries, "r-out", bridge.DirOut), bridgetest.Value(m.Reconnects, "r-in", bridge.DirIn))
}

func TestMalformedToDeadLetterOrDropped(t *testing.T) {
	s := startServer(t)
	bus := bridgetest.Bus(t)
	c := client(t, s)
	ctx := context.Background()
	for _, v := range [][]any{
		{"content-type", "application/cloudevents+json", "data", `{"specversion":`},
		{"ce_specversion", "1.0", "ce_id", "x", "ce_source", "/s", "ce_type", "t", "ce_Bad-Name", "v"},
		fields(t, bridge.FormatBinary, bridgetest.Event(1, 10)),
	} {
		if err := c.XAdd(ctx, &goredis.XAddArgs{Stream: "mixed", Values: v}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := bridge.NewMetrics(nil)
	rd := bridgetest.Reader(t, bus, "/mixed/")
	dl := config(s, "dl", "stream", bridge.FormatBinary)
	dl.In = bridge.Route{Scope: "/mixed/", Address: "mixed"}
	dl.DeadLetter = "mixed-dlq"
	bridgetest.Run(t, bus, dl, m)
	if _, e := bridgetest.ReadCE(t, rd); e.ID != "ev-1" {
		t.Fatalf("good event %+v", e)
	}
	testutil.WaitFor(t, bridgetest.Timeout, "dead letters", func() bool { return len(entries(t, c, "mixed-dlq")) == 2 })
	ids := entries(t, c, "mixed")
	for i, en := range entries(t, c, "mixed-dlq") {
		want := []string{"bad_json", "bad_attribute"}[i]
		if en.Values["ce_deadletterreason"] != want || en.Values["ce_id"] != "mixed-"+ids[i].ID {
			t.Errorf("dead letter %d: %v", i, en.Values)
		}
	}
	drop := config(s, "drop", "stream", bridge.FormatBinary)
	drop.In = bridge.Route{Scope: "/mixed/", Address: "mixed"}
	bridgetest.Run(t, bus, drop, m)
	if _, e := bridgetest.ReadCE(t, rd); e.ID != "ev-1" {
		t.Fatalf("good event %+v", e)
	}
	testutil.WaitFor(t, bridgetest.Timeout, "drops counted", func() bool {
		return bridgetest.Value(m.Drops, "drop", bridge.DirIn, "bad_json") == 1 &&
			bridgetest.Value(m.Drops, "drop", bridge.DirIn, "bad_attribute") == 1
	})
}
