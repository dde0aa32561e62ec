package nats_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
)

func TestOutEveryFormatInOrder(t *testing.T) {
	s := startServer(t)
	bus := bridgetest.Bus(t)
	nc := conn(t, s)
	for _, f := range bridgetest.Formats {
		t.Run(f.String(), func(t *testing.T) {
			subject := "out." + f.String()
			sub, err := nc.SubscribeSync(subject)
			if err != nil {
				t.Fatal(err)
			}
			nc.Flush()
			cfg := config(s, "out-"+f.String(), f, false)
			sc := "/out/" + f.String() + "/"
			cfg.Out = bridge.Route{Scope: sc, Address: subject}
			bridgetest.Run(t, bus, cfg, nil)
			inf := bridgetest.Informer(t, bus, sc)
			const n = 50
			for i := range n {
				bridgetest.PublishCE(t, inf, bridgetest.Event(i, 100))
			}
			for i := range n {
				checkMsg(t, f, next(t, sub), bridgetest.Event(i, 100))
			}
		})
	}
}

// checkMsg checks that m is want in format f.
func checkMsg(t *testing.T, f bridge.Format, m *nats.Msg, want *cloudevent.Event) {
	t.Helper()
	h := m.Header
	switch f {
	case bridge.FormatBinary:
		if h.Get("ce-id") != want.ID || h.Get("ce-specversion") != "1.0" || h.Get("ce-seq") != want.Extensions["seq"] ||
			h.Get("content-type") != want.DataContentType || h.Get("ce-subject") != want.Subject || string(m.Data) != string(want.Data) {
			t.Fatalf("binary message %+v", m)
		}
	case bridge.FormatStructured:
		e, err := cloudevent.Unmarshal(m.Data)
		if err != nil || !reflect.DeepEqual(e, want) || h.Get("content-type") != cloudevent.MediaType {
			t.Fatalf("structured message: %v %+v", err, e)
		}
	case bridge.FormatRaw:
		if len(h) != 0 || string(m.Data) != string(want.Data) {
			t.Fatalf("raw message %+v", m)
		}
	case bridge.FormatFrame:
		e, err := bridge.DecodeValue(bridge.FormatFrame, m.Data, nil)
		if err != nil || !reflect.DeepEqual(e, want) {
			t.Fatalf("frame message: %v %+v", err, e)
		}
	}
}

func TestInEveryFormatInOrder(t *testing.T) {
	s := startServer(t)
	bus := bridgetest.Bus(t)
	nc := conn(t, s)
	for _, js := range []bool{false, true} {
		for _, f := range bridgetest.Formats {
			name := f.String() + "-js" + strconv.FormatBool(js)
			t.Run(name, func(t *testing.T) {
				subject := "in." + name
				sc := "/in/" + name + "/"
				rd := bridgetest.Reader(t, bus, sc)
				cfg := config(s, "in-"+name, f, js)
				cfg.In = bridge.Route{Scope: sc, Address: subject}
				b := bridgetest.Run(t, bus, cfg, nil)
				testutil.WaitFor(t, bridgetest.Timeout, "receiver up", func() bool { return b.Ready() == nil })
				const n = 30
				for i := range n {
					m := msg(t, f, subject, bridgetest.Event(i, 100))
					if err := nc.PublishMsg(m); err != nil {
						t.Fatal(err)
					}
				}
				nc.Flush()
				for i := range n {
					_, e := bridgetest.ReadCE(t, rd)
					checkIn(t, f, js, subject, i, e)
				}
			})
		}
	}
}

// checkIn checks the i-th event a bridge read from subject.
func checkIn(t *testing.T, f bridge.Format, js bool, subject string, i int, e *cloudevent.Event) {
	t.Helper()
	want := bridgetest.Event(i, 100)
	if e.Extensions["natssubject"] != subject {
		t.Fatalf("event %d: extensions %v", i, e.Extensions)
	}
	delete(e.Extensions, "natssubject")
	if js {
		if e.Extensions["natssequence"] != strconv.Itoa(i+1) || e.Extensions["natsstream"] == "" {
			t.Fatalf("event %d: JetStream extensions %v", i, e.Extensions)
		}
		delete(e.Extensions, "natssequence")
		delete(e.Extensions, "natsstream")
	}
	if f == bridge.FormatRaw {
		if e.Source != "/nats/"+subject || e.Type != bridge.FallbackType || string(e.Data) != string(want.Data) || e.ID == "" {
			t.Fatalf("raw event %d: %+v", i, e)
		}
		if js && e.ID != "RSBD_"+strings.ReplaceAll(subject, ".", "_")+"-"+strconv.Itoa(i+1) {
			t.Fatalf("raw event %d id %s", i, e.ID)
		}
		return
	}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("event %d:\n got %+v\nwant %+v", i, e, want)
	}
}

// msg returns the message of e in format f, as the bridge writes it.
func msg(t testing.TB, f bridge.Format, subject string, e *cloudevent.Event) *nats.Msg {
	m := nats.NewMsg(subject)
	switch f {
	case bridge.FormatBinary:
		attrs, ct := bridge.BinaryAttrs(e, "ce-")
		for _, a := range attrs {
			m.Header.Set(a.Name, a.Value)
		}
		m.Header.Set("content-type", ct)
		m.Data = e.Data
	default:
		if f == bridge.FormatStructured {
			m.Header.Set("content-type", cloudevent.MediaType)
		}
		v, err := bridge.EncodeValue(f, e)
		if err != nil {
			panic(err) // the tests' own events always encode
		}
		m.Data = v
	}
	return m
}
