package cloudevents

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/mesh/internal/meshtest"
)

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
	b.Cleanup(func() { _ = g.Close(); srv.Close(); _ = gbus.Close() })
	return &benchEnv{srv: srv, pub: meshtest.Dial(b, n), sub: meshtest.Dial(b, n)}
}

// BenchmarkPublish measures one event from publish to a socket
// subscriber: published by a socket client, or POSTed to the gateway.
func BenchmarkPublish(b *testing.B) {
	for _, size := range meshtest.Sizes {
		data := bytes.Repeat([]byte("x"), size.N)
		b.Run("socket-"+size.Name, func(b *testing.B) {
			e := startBench(b)
			send := meshtest.Publisher(b, e.pub, "/bench/", "bytes", data)
			rd := meshtest.ReaderReady(b, e.sub, "/bench/", send)
			meshtest.Measure(b, send, meshtest.Read(b, rd), "msgs/s")
		})
		b.Run("http-"+size.Name, func(b *testing.B) {
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
			rd := meshtest.ReaderReady(b, e.sub, "/bench/", send)
			meshtest.Measure(b, send, meshtest.Read(b, rd), "msgs/s")
		})
	}
}

// BenchmarkSubscribe measures one event from a socket publisher to a
// gateway subscriber, over SSE and over WebSocket.
func BenchmarkSubscribe(b *testing.B) {
	for _, size := range meshtest.Sizes {
		data := bytes.Repeat([]byte("x"), size.N)
		for _, kind := range []string{"sse", "ws"} {
			b.Run(kind+"-"+size.Name, func(b *testing.B) {
				e := startBench(b)
				send := meshtest.Publisher(b, e.pub, "/bench/", "bytes", data)
				meshtest.Measure(b, send, subscriber(b, e, kind), "msgs/s")
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
