package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// TestGatewayServes runs the daemon with --gateway-http: an HTTP POST
// reaches an RSB socket client, an RSB socket client's event reaches an
// SSE subscriber, and SIGTERM ends the daemon with the subscription open.
func TestGatewayServes(t *testing.T) {
	d := startServing(t, filepath.Join(t.TempDir(), "ready.json"), "--gateway-http", "127.0.0.1:0")
	if d.info.Gateway == "" {
		t.Fatal("ready file names no gateway address")
	}
	base := "http://" + d.info.Gateway
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	bus, err := client.Dial(ctx, "socket://"+d.info.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	rd, err := bus.NewReader(scope.MustParse("/gw/"))
	if err != nil {
		t.Fatal(err)
	}
	// The daemon learns the reader's scope from its Hello: post until an
	// event arrives.
	var got *client.Event
	for got == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/gw/in/", strings.NewReader("hi"))
		req.Header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Ce-Specversion": {"1.0"},
			"Ce-Id": {"1"}, "Ce-Source": {"/test"}, "Ce-Type": {"t"}}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST: %d", resp.StatusCode)
		}
		rctx, rcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		got, _ = rd.Read(rctx)
		rcancel()
	}
	if got.Scope.String() != "/gw/in/" || string(got.Data) != "hi" {
		t.Errorf("socket client got %+v", got.Event)
	}

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/gw/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	inf, err := bus.NewInformer(scope.MustParse("/gw/out/"))
	if err != nil {
		t.Fatal(err)
	}
	ev := &client.Event{Event: notification.Event{WireSchema: "utf-8-string", Data: []byte("to sse")}}
	if err := inf.PublishEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		ce, err := cloudevent.Unmarshal([]byte(data))
		if err != nil || string(ce.Data) != "to sse" || ce.Subject != "/gw/out/" {
			t.Fatalf("SSE event %q: %v", data, err)
		}
		break
	}
	resp, err = http.Get("http://" + d.info.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`rsbd_gateway_published_events_total{protocol="cloudevents"} `, `rsbd_gateway_subscribers{protocol="cloudevents"} 1`,
		`rsbd_gateway_rejected_total{protocol="cloudevents",reason="malformed"} 0`, `rsbd_gateway_dropped_events_total{protocol="cloudevents",reason="queue_full"} 0`} {
		if !strings.Contains(string(text), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	d.signals <- syscall.SIGTERM
	select {
	case code := <-d.done:
		if code != exitOK {
			t.Fatalf("exit %d:\n%s", code, d.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
}
