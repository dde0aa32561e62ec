package kafka_test

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	_ "github.com/rsbd/rsbd/bridge/kafka"
	"github.com/rsbd/rsbd/cloudevent"
)

// bridgetest.Formats are the Kafka bridge's bridgetest.Formats with what a record of each looks
// like.
func TestOutEveryFormatInOrder(t *testing.T) {
	k := startCluster(t)
	bus := bridgetest.Bus(t)
	for _, f := range bridgetest.Formats {
		t.Run(f.String(), func(t *testing.T) {
			cfg := k.config("out-"+f.String(), f)
			sc := "/out/" + f.String() + "/"
			cfg.Out = bridge.Route{Scope: sc, Address: "out-" + f.String()}
			bridgetest.Run(t, bus, cfg, nil)
			inf := bridgetest.Informer(t, bus, sc)
			const n = 50
			for i := range n {
				bridgetest.PublishCE(t, inf, bridgetest.Event(i, 100))
			}
			recs := k.consume(t, cfg.Out.Address, n)
			for i, r := range recs {
				checkRecord(t, f, r, bridgetest.Event(i, 100))
			}
		})
	}
}

// checkRecord checks that r is want written in format f.
func checkRecord(t *testing.T, f bridge.Format, r *kgo.Record, want *cloudevent.Event) {
	t.Helper()
	if string(r.Key) != want.Subject {
		t.Errorf("key %q, want the subject %q", r.Key, want.Subject)
	}
	switch f {
	case bridge.FormatBinary:
		if header(r, "ce_id") != want.ID || header(r, "ce_specversion") != "1.0" || header(r, "ce_seq") != want.Extensions["seq"] ||
			header(r, "content-type") != want.DataContentType || header(r, "ce_time") != want.Time || string(r.Value) != string(want.Data) {
			t.Fatalf("binary record %+v", r)
		}
	case bridge.FormatStructured:
		e, err := cloudevent.Unmarshal(r.Value)
		if err != nil || !reflect.DeepEqual(e, want) || header(r, "content-type") != cloudevent.MediaType {
			t.Fatalf("structured record: %v\n got %+v\nwant %+v", err, e, want)
		}
	case bridge.FormatRaw:
		if len(r.Headers) != 0 || string(r.Value) != string(want.Data) {
			t.Fatalf("raw record %+v", r)
		}
	case bridge.FormatFrame:
		e, err := bridge.DecodeValue(bridge.FormatFrame, r.Value, nil)
		if err != nil || !reflect.DeepEqual(e, want) || r.Value[0] != 0xEF {
			t.Fatalf("frame record: %v %+v", err, e)
		}
	}
}

func TestInEveryFormatInOrder(t *testing.T) {
	k := startCluster(t)
	bus := bridgetest.Bus(t)
	for _, f := range bridgetest.Formats {
		t.Run(f.String(), func(t *testing.T) {
			topic := "in-" + f.String()
			sc := "/in/" + f.String() + "/"
			const n = 50
			var recs []*kgo.Record
			for i := range n {
				recs = append(recs, record(t, f, topic, bridgetest.Event(i, 100)))
			}
			k.produce(t, recs...)
			rd := bridgetest.Reader(t, bus, sc)
			cfg := k.config("in-"+f.String(), f)
			cfg.In = bridge.Route{Scope: sc, Address: topic}
			bridgetest.Run(t, bus, cfg, nil)
			for i := range n {
				_, e := bridgetest.ReadCE(t, rd)
				want := bridgetest.Event(i, 100)
				off := strconv.Itoa(i)
				if f == bridge.FormatRaw {
					want = bridge.Fallback("kafka", topic, topic+"-0-"+off, recs[i].Timestamp, "", want.Data)
					want.Extensions = map[string]string{"partitionkey": bridgetest.Event(i, 100).Subject}
				}
				if e.Extensions["kafkatopic"] != topic || e.Extensions["kafkaoffset"] != off || e.Extensions["kafkapartition"] != "0" ||
					e.Extensions["kafkatimestamp"] == "" {
					t.Fatalf("event %d: broker extensions %v", i, e.Extensions)
				}
				for _, x := range []string{"kafkatopic", "kafkaoffset", "kafkapartition", "kafkatimestamp"} {
					delete(e.Extensions, x)
				}
				if f == bridge.FormatRaw {
					want.Time = e.Time
				}
				if !reflect.DeepEqual(e, want) {
					t.Fatalf("event %d:\n got %+v\nwant %+v", i, e, want)
				}
			}
		})
	}
}

// record returns the record of e in format f, as the bridge writes it.
func record(t testing.TB, f bridge.Format, topic string, e *cloudevent.Event) *kgo.Record {
	r := &kgo.Record{Topic: topic, Key: []byte(e.Subject)}
	switch f {
	case bridge.FormatBinary:
		attrs, ct := bridge.BinaryAttrs(e, "ce_")
		for _, a := range attrs {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: a.Name, Value: []byte(a.Value)})
		}
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "content-type", Value: []byte(ct)})
		r.Value = e.Data
	default:
		if f == bridge.FormatStructured {
			r.Headers = []kgo.RecordHeader{{Key: "content-type", Value: []byte(cloudevent.MediaType)}}
		}
		v, err := bridge.EncodeValue(f, e)
		if err != nil {
			panic(err) // the tests' own events always encode
		}
		r.Value = v
	}
	return r
}
