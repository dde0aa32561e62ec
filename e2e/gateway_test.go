package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/syncbuf"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/mesh/cloudevents"
	"github.com/rsbd/rsbd/notification"
)

// curlBin returns the path of the curl binary; without one the test is
// skipped, or fails under CI=true.
func curlBin(t *testing.T) string {
	t.Helper()
	return testutil.Program(t, "curl", "curl")
}

// curlPost POSTs body to url with the headers through curl and returns the
// HTTP status and the reply.
func curlPost(t *testing.T, curl, url, body string, headers ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := []string{"-sS", "-w", "\n%{http_code}", "--data-binary", "@-"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	cmd := exec.CommandContext(ctx, curl, append(args, url)...)
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl POST %s: %v", url, err)
	}
	i := strings.LastIndexByte(string(out), '\n')
	if i < 0 {
		t.Fatalf("curl POST %s: no status in %q", url, out)
	}
	return string(out[i+1:]), strings.TrimSpace(string(out[:i]))
}

// TestGatewayAcrossTwoDaemons runs the CloudEvents gateway on daemon A of a
// two-daemon cluster: curl publishes a binary-mode, a structured and a batch
// CloudEvent at A and a socket client on B receives them; a socket client
// publishes at B and curl's SSE stream, a curl long-poll and a webhook
// created with curl at A receive its events.
func TestGatewayAcrossTwoDaemons(t *testing.T) {
	t.Parallel()
	curl := curlBin(t)
	c := newCluster(t)
	a := c.start("A", opts{args: []string{"--gateway-http", "127.0.0.1:0", "--gateway-origins", "127.0.0.1:*"}})
	b := c.start("B", opts{})
	c.waitPeers(30 * time.Second)
	gw := "http://" + a.Info().Gateway
	if a.Info().Gateway == "" {
		t.Fatal("A's ready file has no gateway address")
	}

	// B listens on /robot/; a client on A probes until the route to B is
	// in place (the gateway publishes through A's node as that client does).
	bl := dial(t, b, "B/listener")
	bl.listen("/robot/")
	ap := dial(t, a, "A/prober")
	waitRoute(t, 30*time.Second, ap, "/robot/", bl)

	code, reply := curlPost(t, curl, gw+"/robot/arm/", "binary payload",
		"ce-specversion: 1.0", "ce-id: bin-1", "ce-source: /curl", "ce-type: com.example.bin",
		"Content-Type: text/plain; charset=utf-8")
	if code != "202" {
		t.Fatalf("binary mode: %s %s", code, reply)
	}
	code, reply = curlPost(t, curl, gw+"/robot/",
		`{"specversion":"1.0","id":"st-1","source":"/curl","type":"com.example.st","subject":"/robot/leg/",`+
			`"datacontenttype":"text/plain","data":"structured payload"}`,
		"Content-Type: application/cloudevents+json")
	if code != "202" {
		t.Fatalf("structured mode: %s %s", code, reply)
	}
	code, reply = curlPost(t, curl, gw+"/robot/batch/",
		`[{"specversion":"1.0","id":"ba-1","source":"/curl","type":"com.example.ba","datacontenttype":"text/plain","data":"batch one"},`+
			`{"specversion":"1.0","id":"ba-2","source":"/curl","type":"com.example.ba","datacontenttype":"text/plain","data":"batch two"}]`,
		"Content-Type: application/cloudevents-batch+json")
	if code != "202" {
		t.Fatalf("batch mode: %s %s", code, reply)
	}
	want := map[string]string{ // payload → scope
		"binary payload": "/robot/arm/", "structured payload": "/robot/leg/",
		"batch one": "/robot/batch/", "batch two": "/robot/batch/",
	}
	fromCurl := func(ev *notification.Event) bool {
		src, _ := ev.MetaData.UserInfo("ce:source")
		return src == "/curl"
	}
	testutil.WaitFor(t, 10*time.Second, "B receives the gateway's events", func() bool {
		return bl.count(fromCurl) >= len(want)
	})
	for _, ev := range bl.received(fromCurl) {
		sc, ok := want[string(ev.Data)]
		if !ok || ev.Scope.String() != sc {
			t.Errorf("at B: event %q on %s, want it on %q", ev.Data, ev.Scope, sc)
		}
		delete(want, string(ev.Data))
	}
	if len(want) > 0 {
		t.Errorf("B missed %v", want)
	}
	checkLoggerShowsAttributes(t, curl, gw, b)

	// curl subscribes by SSE at A; B publishes until the stream shows it.
	sctx, scancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer scancel()
	sse := exec.CommandContext(sctx, curl, "-sN", gw+"/robot/sse/")
	out, err := sse.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sse.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { scancel(); _ = sse.Wait() }()
	testutil.WaitFor(t, 10*time.Second, "SSE subscriber at A", func() bool { return a.Metric(`rsbd_gateway_subscribers{protocol="cloudevents"}`) == 1 })
	got := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(out)
		lines.Buffer(nil, 1<<20)
		for lines.Scan() {
			if v, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				got <- v
				return
			}
		}
		close(got)
	}()
	bp := dial(t, b, "B/publisher")
	var data string
	testutil.WaitFor(t, 30*time.Second, "B's event on A's SSE stream", func() bool {
		bp.publish("/robot/sse/", schemaText, []byte("from B"))
		select {
		case data = <-got:
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
	ce, err := cloudevent.Unmarshal([]byte(data))
	if err != nil || string(ce.Data) != "from B" || ce.Subject != "/robot/sse/" {
		raw, _ := json.Marshal(data)
		t.Errorf("SSE event %s: %v", raw, err)
	}
	testGatewayWebSocket(t, gw, bp)
	testGatewayBrowser(t, gw, bp)
	testGatewayPollAndWebhook(t, curl, gw, bp)

	// A subscription in an unknown format is refused and counted in
	// /metrics under its reason.
	status, err := exec.CommandContext(sctx, curl, "-s", "-o", "/dev/null", "-w", "%{http_code}", gw+"/robot/?format=xml").Output()
	if err != nil || string(status) != "400" {
		t.Errorf("format=xml: %s %v", status, err)
	}
	if v := a.Metric(`rsbd_gateway_rejected_total{protocol="cloudevents",reason="out_format"}`); v != 1 {
		t.Errorf("rsbd_gateway_rejected_total{protocol=\"cloudevents\",reason=\"out_format\"} = %v", v)
	}
}

// testGatewayPollAndWebhook checks, on the cluster of
// TestGatewayAcrossTwoDaemons, that events bp publishes at B reach a curl
// long-poll at A and a webhook curl creates at A.
func testGatewayPollAndWebhook(t *testing.T, curl, gw string, bp *client) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The first poll opens the cursor (and A's interest in /robot/poll/).
	hdr, err := exec.CommandContext(ctx, curl, "-sS", "-D", "-", "-o", "/dev/null", gw+"/robot/poll/?wait=0s").Output()
	if err != nil {
		t.Fatalf("first poll: %v", err)
	}
	var cursor string
	for _, line := range strings.Split(string(hdr), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Rsbd-Cursor") {
			cursor = strings.TrimSpace(v)
		}
	}
	if cursor == "" {
		t.Fatalf("no cursor in %q", hdr)
	}
	testutil.WaitFor(t, 30*time.Second, "B's event in A's long-poll", func() bool {
		bp.publish("/robot/poll/", schemaText, []byte("polled"))
		out, err := exec.CommandContext(ctx, curl, "-sS", gw+"/robot/poll/?wait=1s&after="+cursor).Output()
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		evs, err := cloudevent.UnmarshalBatch(out)
		if err != nil {
			t.Fatalf("poll reply %q: %v", out, err)
		}
		return len(evs) > 0 && string(evs[0].Data) == "polled"
	})

	// The receiver answers the first two deliveries with 503: the event
	// they carried must arrive once, on the third attempt.
	type attempt struct {
		id, data string
		ok       bool
	}
	attempts := make(chan attempt, 64)
	var posts atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions { // the validation handshake
			w.Header().Set("WebHook-Allowed-Origin", r.Header.Get("WebHook-Request-Origin"))
			return
		}
		body, _ := io.ReadAll(r.Body)
		ce, err := cloudevent.Unmarshal(body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		ok := posts.Add(1) > 2
		select {
		case attempts <- attempt{id: ce.ID, data: string(ce.Data), ok: ok}:
		default:
		}
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer target.Close()
	code, reply := curlPost(t, curl, gw+"/.gateway/webhooks", `{"scope":"/robot/hook/","url":"`+target.URL+`"}`,
		"Content-Type: application/json")
	if code != "201" {
		t.Fatalf("webhook: %s %s", code, reply)
	}
	tries := map[string]int{} // event id → attempts seen
	var first string          // the event the two 503s refused
	testutil.WaitFor(t, 60*time.Second, "B's event at A's webhook after two 503s", func() bool {
		if first == "" {
			bp.publish("/robot/hook/", schemaText, []byte("hooked"))
		}
		select {
		case a := <-attempts:
			tries[a.id]++
			if first == "" {
				first = a.id
			}
			return a.ok && a.id == first
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
	if tries[first] != 3 {
		t.Errorf("the refused event was attempted %d times, want 2 refusals and 1 delivery", tries[first])
	}
	// A later event arrives after any repeat of the first would have.
	testutil.WaitFor(t, 30*time.Second, "a second event at A's webhook", func() bool {
		bp.publish("/robot/hook/", schemaText, []byte("second"))
		select {
		case a := <-attempts:
			tries[a.id]++
			return a.id != first && a.data == "second"
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
	if tries[first] != 3 {
		t.Errorf("the first event was delivered again: %d attempts", tries[first])
	}
}

// checkLoggerShowsAttributes runs `rsb logger --style json` on daemon b
// and curl POSTs CloudEvents at the gateway gw until the logger prints
// one: its meta data carries the CloudEvent's attributes as ce: user infos.
func checkLoggerShowsAttributes(t *testing.T, curl, gw string, b *daemon) {
	t.Helper()
	rsb := testutil.Build(t, "github.com/rsbd/rsbd/cmd/rsb")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, rsb, "logger", "--style", "json", "--stop-after", "1",
		"socket://"+b.Info().Socket+"/robot/logger/")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var out, errs syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() { cancel(); <-done }()
	var exitErr error
	exited := func(wait time.Duration) bool {
		select {
		case exitErr = <-done:
			done <- exitErr // for the deferred receive
			return true
		case <-time.After(wait):
			return false
		}
	}
	testutil.WaitFor(t, 30*time.Second, "rsb logger at B prints the gateway's event", func() bool {
		if code, reply := curlPost(t, curl, gw+"/robot/logger/", "logged", "ce-specversion: 1.0", "ce-id: log-1",
			"ce-source: /curl", "ce-type: com.example.log", "Content-Type: text/plain"); code != "202" {
			t.Fatalf("POST for the logger: %s %s", code, reply)
		}
		return exited(200 * time.Millisecond)
	})
	if exitErr != nil {
		t.Fatalf("rsb logger: %v\n%s", exitErr, errs.String())
	}
	var ev struct {
		Scope    string            `json:"scope"`
		MetaData map[string]string `json:"meta_data"`
		Payload  any               `json:"payload"`
	}
	line, _, _ := strings.Cut(out.String(), "\n")
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatalf("logger output %q: %v", out.String(), err)
	}
	if ev.Scope != "/robot/logger/" || ev.MetaData["ce:type"] != "com.example.log" || ev.MetaData["ce:source"] != "/curl" {
		t.Errorf("rsb logger printed %s", line)
	}
}

// testGatewayWebSocket checks, on the cluster of
// TestGatewayAcrossTwoDaemons, that events bp publishes at B reach a
// WebSocket subscriber (subprotocol cloudevents.json) at A's gateway gw.
func testGatewayWebSocket(t *testing.T, gw string, bp *client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(gw, "http")+"/robot/ws/",
		&websocket.DialOptions{Subprotocols: []string{cloudevents.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if c.Subprotocol() != cloudevents.Subprotocol {
		t.Fatalf("subprotocol %q", c.Subprotocol())
	}
	got := make(chan *cloudevent.Event, 1)
	go func() {
		for {
			typ, msg, err := c.Read(ctx)
			if err != nil {
				close(got)
				return
			}
			if ce, err := cloudevent.Unmarshal(msg); typ == websocket.MessageText && err == nil {
				got <- ce
				return
			}
		}
	}()
	var ce *cloudevent.Event
	testutil.WaitFor(t, 30*time.Second, "B's event on A's WebSocket", func() bool {
		bp.publish("/robot/ws/", schemaText, []byte("over websocket"))
		select {
		case ce = <-got:
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
	if ce == nil || string(ce.Data) != "over websocket" || ce.Subject != "/robot/ws/" {
		t.Errorf("WebSocket event %+v", ce)
	}
}
