package meshmessage

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// benchSizes are the payload sizes the benchmarks measure.
var benchSizes = []struct {
	name string
	n    int
}{{"64B", 64}, {"1KiB", 1024}}

// benchEnv is a node with the listener embedded and two socket clients.
type benchEnv struct {
	addr     string
	pub, sub *client.Bus
}

// startBench starts a node, its meshmessage listener and two socket
// clients of the node.
func startBench(b *testing.B) *benchEnv {
	b.Helper()
	n := clienttest.StartNodes(b, 1)[0]
	mbus := client.Embedded(n)
	s, err := New(mbus, Config{Logger: clienttest.Logger()})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dial := func() *client.Bus {
		bus, err := client.Dial(ctx, "socket://"+n.SocketAddr().String())
		if err != nil {
			b.Fatal(err)
		}
		return bus
	}
	e := &benchEnv{addr: ln.Addr().String(), pub: dial(), sub: dial()}
	b.Cleanup(func() { _ = s.Close(); e.pub.Close(); e.sub.Close(); _ = mbus.Close() })
	return e
}

// latencies collects one latency per operation and reports the median,
// the 99th percentile and the sequential rate.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	var sum time.Duration
	for _, d := range l {
		sum += d
	}
	b.ReportMetric(float64(l[len(l)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(l[len(l)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(l))/sum.Seconds(), "events/s")
	b.ReportMetric(0, "ns/op")
}

// readerReady returns a reader on sc of bus once events published by
// publish reach it (the node learns the reader's interest asynchronously).
func readerReady(b *testing.B, bus *client.Bus, sc string, publish func()) *client.Reader {
	rd, err := bus.NewReader(scope.MustParse(sc))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rd.Close() })
	for range 200 {
		publish()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := rd.Read(ctx)
		cancel()
		if err == nil {
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				_, err := rd.Read(ctx)
				cancel()
				if err != nil {
					return rd
				}
			}
		}
	}
	b.Fatal("reader never reached")
	return nil
}

// meshClient connects to the listener, says HELLO and returns the
// connection with a reader that discards what the listener sends (the
// ACKs) unless keep is set, which then gets every Package.
func meshClient(b *testing.B, addr string, keep chan<- *Package) net.Conn {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = nc.Close() })
	hello, _ := Marshal(&Package{Header: Header{Command: HelloRequest, Seq: "1"}})
	if _, err := nc.Write(hello); err != nil {
		b.Fatal(err)
	}
	go func() {
		r := bufio.NewReaderSize(nc, 64<<10)
		for {
			p, err := Read(r)
			if err != nil {
				return
			}
			if keep != nil {
				keep <- p
			}
		}
	}()
	return nc
}

// BenchmarkPublish measures one event from publish to a socket
// subscriber: published by a socket client, or sent by an EventMesh TCP
// client as ASYNC_MESSAGE_TO_SERVER.
func BenchmarkPublish(b *testing.B) {
	for _, size := range benchSizes {
		data := bytes.Repeat([]byte("x"), size.n)
		b.Run("socket-"+size.name, func(b *testing.B) {
			e := startBench(b)
			inf, err := e.pub.NewInformer(scope.MustParse("/bench/"))
			if err != nil {
				b.Fatal(err)
			}
			send := func() {
				ev := &client.Event{Event: notification.Event{WireSchema: TextSchema, Data: data}}
				if err := inf.PublishEvent(context.Background(), ev); err != nil {
					b.Fatal(err)
				}
			}
			measure(b, readerReady(b, e.sub, "/bench/", send), send)
		})
		b.Run("meshmessage-"+size.name, func(b *testing.B) {
			e := startBench(b)
			nc := meshClient(b, e.addr, nil)
			body, _ := json.Marshal(Message{Topic: "/bench/", Body: string(data)})
			pkg, err := Marshal(&Package{Header: Header{Command: AsyncMessageToServer, Seq: "2",
				Properties: map[string]string{PropProtocolType: ProtocolMeshMessage}}, Body: body})
			if err != nil {
				b.Fatal(err)
			}
			send := func() {
				if _, err := nc.Write(pkg); err != nil {
					b.Fatal(err)
				}
			}
			measure(b, readerReady(b, e.sub, "/bench/", send), send)
		})
	}
}

// measure times send until rd reads the event, b.N times.
func measure(b *testing.B, rd *client.Reader, send func()) {
	lat := make(latencies, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		send()
		if _, err := rd.Read(context.Background()); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	lat.report(b)
}

// BenchmarkSubscribe measures one event from a socket publisher to an
// EventMesh TCP client's subscription, as ASYNC_MESSAGE_TO_CLIENT.
func BenchmarkSubscribe(b *testing.B) {
	for _, size := range benchSizes {
		data := bytes.Repeat([]byte("x"), size.n)
		b.Run("meshmessage-"+size.name, func(b *testing.B) {
			e := startBench(b)
			in := make(chan *Package, 1024)
			nc := meshClient(b, e.addr, in)
			for _, p := range []*Package{
				{Header: Header{Command: SubscribeRequest, Seq: "2"}, Body: []byte(`{"topicList":[{"topic":"/bench/"}]}`)},
				{Header: Header{Command: ListenRequest, Seq: "3"}},
			} {
				w, _ := Marshal(p)
				if _, err := nc.Write(w); err != nil {
					b.Fatal(err)
				}
			}
			inf, err := e.pub.NewInformer(scope.MustParse("/bench/"))
			if err != nil {
				b.Fatal(err)
			}
			send := func() {
				ev := &client.Event{Event: notification.Event{WireSchema: TextSchema, Data: data}}
				if err := inf.PublishEvent(context.Background(), ev); err != nil {
					b.Fatal(err)
				}
			}
			recv := func(timeout time.Duration) bool {
				deadline := time.After(timeout)
				for {
					select {
					case p := <-in:
						if p.Header.Command == AsyncMessageToClient {
							return true
						}
					case <-deadline:
						return false
					}
				}
			}
			for i := 0; ; i++ {
				if i == 200 {
					b.Fatal("subscription never reached")
				}
				send()
				if recv(20 * time.Millisecond) {
					break
				}
			}
			for recv(20 * time.Millisecond) {
			}
			lat := make(latencies, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				send()
				if !recv(10 * time.Second) {
					b.Fatal("event lost")
				}
				lat = append(lat, time.Since(t0))
			}
			lat.report(b)
		})
	}
}
