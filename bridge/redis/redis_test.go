package redis_test

import (
	"context"
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
)

func TestStreamOutEveryFormatInOrder(t *testing.T) {
	s := startServer(t)
	bus := bridgetest.Bus(t)
	c := client(t, s)
	for _, f := range bridgetest.Formats {
		t.Run(f.String(), func(t *testing.T) {
			stream := "out-" + f.String()
			sc := "/out/" + f.String() + "/"
			cfg := config(s, "out-"+f.String(), "stream", f)
			cfg.Out = bridge.Route{Scope: sc, Address: stream}
			m, _ := bridge.NewMetrics(nil)
			bridgetest.Run(t, bus, cfg, m)
			inf := bridgetest.Informer(t, bus, sc)
			const n = 50
			for i := range n {
				bridgetest.PublishCE(t, inf, bridgetest.Event(i, 100))
			}
			testutil.WaitFor(t, bridgetest.Timeout, "sent", func() bool { return bridgetest.Value(m.Messages, cfg.Name, bridge.DirOut) == n })
			for i, en := range entries(t, c, stream) {
				checkEntry(t, f, en, bridgetest.Event(i, 100))
			}
		})
	}
}

// checkEntry checks that en is want in format f.
func checkEntry(t *testing.T, f bridge.Format, en goredis.XMessage, want *cloudevent.Event) {
	t.Helper()
	v := func(k string) string { s, _ := en.Values[k].(string); return s }
	switch f {
	case bridge.FormatBinary:
		if v("ce_id") != want.ID || v("ce_specversion") != "1.0" || v("ce_seq") != want.Extensions["seq"] ||
			v("content-type") != want.DataContentType || v("data") != string(want.Data) {
			t.Fatalf("binary entry %v", en.Values)
		}
	case bridge.FormatRaw:
		if len(en.Values) != 1 || v("data") != string(want.Data) {
			t.Fatalf("raw entry %v", en.Values)
		}
	default:
		e, err := bridge.DecodeValue(f, []byte(v("data")), nil)
		if err != nil || !reflect.DeepEqual(e, want) {
			t.Fatalf("%s entry: %v %+v", f, err, e)
		}
	}
}

func TestStreamInEveryFormatInOrder(t *testing.T) {
	s := startServer(t)
	bus := bridgetest.Bus(t)
	c := client(t, s)
	ctx := context.Background()
	for _, f := range bridgetest.Formats {
		t.Run(f.String(), func(t *testing.T) {
			stream := "in-" + f.String()
			sc := "/in/" + f.String() + "/"
			const n = 30
			for i := range n {
				if err := c.XAdd(ctx, &goredis.XAddArgs{Stream: stream, Values: fields(t, f, bridgetest.Event(i, 100))}).Err(); err != nil {
					t.Fatal(err)
				}
			}
			rd := bridgetest.Reader(t, bus, sc)
			cfg := config(s, "in-"+f.String(), "stream", f)
			cfg.In = bridge.Route{Scope: sc, Address: stream}
			bridgetest.Run(t, bus, cfg, nil)
			ids := entries(t, c, stream)
			for i := range n {
				_, e := bridgetest.ReadCE(t, rd)
				want := bridgetest.Event(i, 100)
				if e.Extensions["redisstream"] != stream || e.Extensions["redisid"] != ids[i].ID || e.Extensions["redisredelivered"] != "false" {
					t.Fatalf("event %d: extensions %v", i, e.Extensions)
				}
				for _, x := range []string{"redisstream", "redisid", "redisredelivered"} {
					delete(e.Extensions, x)
				}
				if f == bridge.FormatRaw {
					if e.ID != stream+"-"+ids[i].ID || e.Source != "/redis/"+stream || string(e.Data) != string(want.Data) {
						t.Fatalf("raw event %d: %+v", i, e)
					}
					continue
				}
				if !reflect.DeepEqual(e, want) {
					t.Fatalf("event %d:\n got %+v\nwant %+v", i, e, want)
				}
			}
		})
	}
}

// fields returns the entry of e in format f, as the bridge writes it.
func fields(t testing.TB, f bridge.Format, e *cloudevent.Event) []any {
	if f == bridge.FormatBinary {
		attrs, ct := bridge.BinaryAttrs(e, "ce_")
		var out []any
		for _, a := range attrs {
			out = append(out, a.Name, a.Value)
		}
		return append(out, "content-type", ct, "data", e.Data)
	}
	v, err := bridge.EncodeValue(f, e)
	if err != nil {
		panic(err) // the tests' own events always encode
	}
	if f == bridge.FormatStructured {
		return []any{"content-type", cloudevent.MediaType, "data", v}
	}
	return []any{"data", v}
}

func TestPubSubBothWays(t *testing.T) {
	s := startServer(t)
	bus := bridgetest.Bus(t)
	c := client(t, s)
	ctx := context.Background()
	for _, f := range []bridge.Format{bridge.FormatStructured, bridge.FormatRaw, bridge.FormatFrame} {
		t.Run(f.String(), func(t *testing.T) {
			ch := "ch-" + f.String()
			sub := c.Subscribe(ctx, ch+"-out")
			t.Cleanup(func() { _ = sub.Close() })
			if _, err := sub.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			rd := bridgetest.Reader(t, bus, "/ps/in/"+f.String()+"/")
			cfg := config(s, "ps-"+f.String(), "pubsub", f)
			cfg.Out = bridge.Route{Scope: "/ps/out/" + f.String() + "/", Address: ch + "-out"}
			cfg.In = bridge.Route{Scope: "/ps/in/" + f.String() + "/", Address: ch + "-in"}
			b := bridgetest.Run(t, bus, cfg, nil)
			testutil.WaitFor(t, bridgetest.Timeout, "subscribed", func() bool {
				n, _ := c.PubSubNumSub(ctx, ch+"-in").Result()
				return n[ch+"-in"] == 1 && b.Ready() == nil
			})
			inf := bridgetest.Informer(t, bus, cfg.Out.Scope)
			const n = 20
			for i := range n {
				bridgetest.PublishCE(t, inf, bridgetest.Event(i, 50))
				v, _ := bridge.EncodeValue(f, bridgetest.Event(i, 50))
				if err := c.Publish(ctx, ch+"-in", v).Err(); err != nil {
					t.Fatal(err)
				}
			}
			for i := range n {
				m, err := sub.ReceiveMessage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				want := bridgetest.Event(i, 50)
				if f == bridge.FormatRaw {
					if m.Payload != string(want.Data) {
						t.Fatalf("raw message %d: %s", i, m.Payload)
					}
				} else if e, err := bridge.DecodeValue(f, []byte(m.Payload), nil); err != nil || !reflect.DeepEqual(e, want) {
					t.Fatalf("message %d: %v %+v", i, err, e)
				}
				_, e := bridgetest.ReadCE(t, rd)
				if e.Extensions["redischannel"] != ch+"-in" {
					t.Fatalf("event %d extensions %v", i, e.Extensions)
				}
				if f != bridge.FormatRaw && bridgetest.Seq(e) != i {
					t.Fatalf("event %d has seq %d", i, bridgetest.Seq(e))
				}
			}
		})
	}
}

func TestAttributeLessFromRedisCLI(t *testing.T) {
	s := startServer(t)
	bus := bridgetest.Bus(t)
	cli := testutil.Program(t, "redis-tools", "redis-cli")
	port := fmt.Sprint(s.Port)
	run := func(args ...string) string {
		out, err := exec.Command(cli, append([]string{"-p", port}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	id1 := run("XADD", "plain", "*", "data", "hello redis")
	id2 := run("XADD", "plain", "*", "temp", "21")
	rd := bridgetest.Reader(t, bus, "/plain/")
	cfg := config(s, "plain", "stream", bridge.FormatBinary)
	cfg.In = bridge.Route{Scope: "/plain/", Address: "plain"}
	bridgetest.Run(t, bus, cfg, nil)
	_, e := bridgetest.ReadCE(t, rd)
	if e.ID != "plain-"+id1 || e.Source != "/redis/plain" || e.Type != bridge.FallbackType ||
		e.DataContentType != bridge.ContentText || string(e.Data) != "hello redis" || e.Time == "" {
		t.Errorf("data entry: %+v", e)
	}
	if at, err := cloudevent.ParseTime(e.Time); err != nil || time.Since(at) > time.Hour {
		t.Errorf("time %s", e.Time)
	}
	_, e = bridgetest.ReadCE(t, rd)
	if e.ID != "plain-"+id2 || e.DataContentType != bridge.ContentJSON || string(e.Data) != `{"temp":"21"}` {
		t.Errorf("field entry: %+v", e)
	}
}
