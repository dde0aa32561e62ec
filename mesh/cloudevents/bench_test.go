package cloudevents

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

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

// benchEnv is a node with the gateway embedded and two socket clients.
type benchEnv struct {
	srv      *httptest.Server
	pub, sub *client.Bus
}

// startBench starts a node, its gateway and two socket clients.
func startBench(b *testing.B) *benchEnv {
	b.Helper()
	n := clienttest.StartNodes(b, 1)[0]
	gbus := client.Embedded(n)
	g, err := New(gbus, Config{})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(g)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	dial := func() *client.Bus {
		bus, err := client.Dial(ctx, "socket://"+n.SocketAddr().String())
		if err != nil {
			b.Fatal(err)
		}
		return bus
	}
	e := &benchEnv{srv: srv, pub: dial(), sub: dial()}
	b.Cleanup(func() { _ = g.Close(); srv.Close(); e.pub.Close(); e.sub.Close(); _ = gbus.Close() })
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
	b.ReportMetric(float64(len(l))/sum.Seconds(), "msgs/s")
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
			drain(rd)
			return rd
		}
	}
	b.Fatal("reader never reached")
	return nil
}

// drain reads what rd holds queued.
func drain(rd *client.Reader) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := rd.Read(ctx)
		cancel()
		if err != nil {
			return
		}
	}
}

// BenchmarkPublish measures one event from publish to a socket
// subscriber: published by a socket client, or POSTed to the gateway.
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
				ev := &client.Event{Event: notification.Event{WireSchema: "bytes", Data: data}}
				if err := inf.PublishEvent(context.Background(), ev); err != nil {
					b.Fatal(err)
				}
			}
			rd := readerReady(b, e.sub, "/bench/", send)
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
		})
		b.Run("http-"+size.name, func(b *testing.B) {
			e := startBench(b)
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			send := func() {
				req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/bench/", bytes.NewReader(data))
				req.Header = http.Header{"Content-Type": {"application/octet-stream"}, "Ce-Specversion": {"1.0"},
					"Ce-Id": {"1"}, "Ce-Source": {"/bench"}, "Ce-Type": {"bench"}}
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			rd := readerReady(b, e.sub, "/bench/", send)
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
		})
	}
}

// BenchmarkSubscribe measures one event from a socket publisher to a
// gateway subscriber, over SSE and over WebSocket.
func BenchmarkSubscribe(b *testing.B) {
	for _, size := range benchSizes {
		data := bytes.Repeat([]byte("x"), size.n)
		for _, kind := range []string{"sse", "ws"} {
			b.Run(kind+"-"+size.name, func(b *testing.B) {
				e := startBench(b)
				inf, err := e.pub.NewInformer(scope.MustParse("/bench/"))
				if err != nil {
					b.Fatal(err)
				}
				send := func() {
					ev := &client.Event{Event: notification.Event{WireSchema: "bytes", Data: data}}
					if err := inf.PublishEvent(context.Background(), ev); err != nil {
						b.Fatal(err)
					}
				}
				recv := subscriber(b, e, kind)
				lat := make(latencies, 0, b.N)
				for b.Loop() {
					t0 := time.Now()
					send()
					recv()
					lat = append(lat, time.Since(t0))
				}
				lat.report(b)
			})
		}
	}
}

// subscriber opens an SSE or WebSocket subscription to /bench/ and returns
// a function that waits for its next event.
func subscriber(b *testing.B, e *benchEnv, kind string) func() {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	if kind == "ws" {
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.srv.URL, "http")+"/bench/",
			&websocket.DialOptions{Subprotocols: []string{Subprotocol}})
		if err != nil {
			b.Fatal(err)
		}
		c.SetReadLimit(maxWSMessage)
		b.Cleanup(func() { c.CloseNow() })
		return func() {
			if _, _, err := c.Read(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/bench/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { resp.Body.Close() })
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	return func() {
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if bytes.HasPrefix(line, []byte("data: ")) {
				return
			}
		}
	}
}
