package nats_test

import (
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/internal/testutil"
)

func TestJetStreamRestartLosesNothing(t *testing.T) {
	s := startServer(t)
	m, _ := bridge.NewMetrics(nil)
	out := config(s, "js-out", bridge.FormatBinary, true)
	out.Out = bridge.Route{Scope: "/js/", Address: "js.events"}
	in := config(s, "js-in", bridge.FormatBinary, true)
	in.In = bridge.Route{Scope: "/back/", Address: "js.events"}
	seen := bridgetest.RoundTripAcrossRestart(t, s, out, in, m, 100)
	t.Logf("%d events through JetStream across the restart; out: %v retries, %v reconnects; in: %v reconnects", len(seen),
		bridgetest.Value(m.Retries, "js-out", bridge.DirOut), bridgetest.Value(m.Reconnects, "js-out", bridge.DirOut),
		bridgetest.Value(m.Reconnects, "js-in", bridge.DirIn))
}

func TestAttributeLessFromPlainClient(t *testing.T) {
	s := startServer(t)
	bus := bridgetest.Bus(t)
	nc := conn(t, s)
	for _, js := range []bool{false, true} {
		t.Run("jetstream="+strconv.FormatBool(js), func(t *testing.T) {
			subject := "plain." + strconv.FormatBool(js)
			sc := "/plain/" + strconv.FormatBool(js) + "/"
			rd := bridgetest.Reader(t, bus, sc)
			cfg := config(s, "plain-"+strconv.FormatBool(js), bridge.FormatBinary, js)
			cfg.In = bridge.Route{Scope: sc, Address: subject}
			b := bridgetest.Run(t, bus, cfg, nil)
			testutil.WaitFor(t, bridgetest.Timeout, "receiver up", func() bool { return b.Ready() == nil })
			if err := nc.Publish(subject, []byte("plain text")); err != nil {
				t.Fatal(err)
			}
			nc.Flush()
			_, e := bridgetest.ReadCE(t, rd)
			if e.Source != "/nats/"+subject || e.Type != bridge.FallbackType || e.DataContentType != bridge.ContentText ||
				string(e.Data) != "plain text" || e.Time == "" || e.Extensions["natssubject"] != subject {
				t.Errorf("attribute-less: %+v", e)
			}
			if js && e.ID != "RSBD_plain_true-1" {
				t.Errorf("JetStream id %s", e.ID)
			}
		})
	}
}

func TestMalformedToDeadLetterOrDropped(t *testing.T) {
	s := startServer(t)
	bus := bridgetest.Bus(t)
	nc := conn(t, s)
	m, _ := bridge.NewMetrics(nil)
	dlq, err := nc.SubscribeSync("dlq")
	if err != nil {
		t.Fatal(err)
	}
	rd := bridgetest.Reader(t, bus, "/mixed/")
	dl := config(s, "dl", bridge.FormatStructured, false)
	dl.In = bridge.Route{Scope: "/mixed/", Address: "mixed"}
	dl.DeadLetter = "dlq"
	drop := config(s, "drop", bridge.FormatBinary, false)
	drop.In = bridge.Route{Scope: "/mixed/", Address: "mixed"}
	for _, cfg := range []bridge.Config{dl, drop} {
		b := bridgetest.Run(t, bus, cfg, m)
		testutil.WaitFor(t, bridgetest.Timeout, "receiver up", func() bool { return b.Ready() == nil })
	}
	bad := nats.NewMsg("mixed")
	bad.Header.Set("content-type", "application/cloudevents+json")
	bad.Data = []byte(`{"specversion":"1.0",`)
	badExt := nats.NewMsg("mixed")
	for k, v := range map[string]string{"ce-specversion": "1.0", "ce-id": "x", "ce-source": "/s", "ce-type": "t", "ce-Bad-Name": "v"} {
		badExt.Header.Set(k, v)
	}
	for _, msg := range []*nats.Msg{bad, badExt, msg(t, bridge.FormatBinary, "mixed", bridgetest.Event(1, 10))} {
		if err := nc.PublishMsg(msg); err != nil {
			t.Fatal(err)
		}
	}
	nc.Flush()
	if d := next(t, dlq); d.Header.Get("content-type") != "application/cloudevents+json" {
		t.Errorf("dead letter headers %v", d.Header)
	}
	_, e := bridgetest.ReadCE(t, rd) // the drop bridge reads the good event
	if e.ID != "ev-1" {
		t.Errorf("good event %+v", e)
	}
	testutil.WaitFor(t, bridgetest.Timeout, "counted", func() bool {
		return bridgetest.Value(m.Drops, "drop", bridge.DirIn, "bad_json") == 1 &&
			bridgetest.Value(m.Drops, "drop", bridge.DirIn, "bad_attribute") == 1 &&
			bridgetest.Value(m.DeadLetters, "dl", bridge.DirIn) >= 2
	})
}
