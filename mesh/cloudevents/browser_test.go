//go:build linux

package cloudevents

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
)

// Paths the browser test serves beside the gateway: its page and the
// handler the page reports what it received to.
const (
	browserPage   = "/browser-test/page.html"
	browserReport = "/browser-test/report"
)

// browserHTML subscribes to /robot/ over a WebSocket with the
// cloudevents.json subprotocol, as a web client of the gateway would. On
// the first message it writes the CloudEvent's id and data into the
// document and POSTs what it got, with the document's text, to
// browserReport; a socket that fails or closes first is reported too, so
// the test fails fast with the reason.
const browserHTML = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>rsbd WebSocket</title></head>
<body><p id="out">waiting</p>
<script>
const out = document.getElementById("out");
let done = false;
function report(r) {
  if (done) return;
  done = true;
  fetch("` + browserReport + `", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(r)});
}
const ws = new WebSocket("ws://" + location.host + "/robot/", "cloudevents.json");
ws.onmessage = (m) => {
  let ce;
  try { ce = JSON.parse(m.data); } catch (e) { report({error: "not JSON: " + e, message: m.data}); return; }
  out.textContent = ce.id + " " + ce.data;
  report({protocol: ws.protocol, message: m.data, id: ce.id, subject: ce.subject, data: ce.data, text: out.textContent});
  ws.close();
};
ws.onerror = () => report({error: "websocket error"});
ws.onclose = (c) => report({error: "websocket closed: " + c.code + " " + c.reason});
</script></body></html>
`

// browserResult is what the page reports.
type browserResult struct {
	Error    string `json:"error"`
	Protocol string `json:"protocol"`
	Message  string `json:"message"`
	ID       string `json:"id"`
	Subject  string `json:"subject"`
	Data     string `json:"data"`
	Text     string `json:"text"`
}

// TestBrowserSubscribesByWebSocket checks a real browser's WebSocket
// (headless Chromium) subscribes to the gateway with the cloudevents.json
// subprotocol and receives an RSB event as a structured CloudEvent.
func TestBrowserSubscribesByWebSocket(t *testing.T) {
	bin := testutil.Program(t, "chromium", "chromium", "chromium-browser")
	reports := make(chan browserResult, 1)
	e := startWith(t, Config{}, map[string]http.Handler{
		browserPage: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, browserHTML)
		}),
		browserReport: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var res browserResult
			if err := json.NewDecoder(r.Body).Decode(&res); err != nil {
				res.Error = "bad report: " + err.Error()
			}
			// Only the first report counts; the page sends one.
			select {
			case reports <- res:
			default:
			}
			w.WriteHeader(http.StatusNoContent)
		}),
		// A GET the gateway would serve as one more SSE subscription.
		"/favicon.ico": http.NotFoundHandler(),
	})
	runBrowser(t, bin, e.srv.URL+browserPage)

	e.waitSubscribers(t, 1)
	ev := e.publishRSB(t, "/robot/leg/", "to the browser")

	var res browserResult
	select {
	case res = <-reports:
	case <-time.After(waitTimeout):
		t.Fatal("no report from the browser")
	}
	if res.Error != "" {
		t.Fatalf("browser: %s", res.Error)
	}
	if res.Protocol != Subprotocol {
		t.Errorf("browser's subprotocol %q", res.Protocol)
	}
	ce, err := cloudevent.Unmarshal([]byte(res.Message))
	if err != nil {
		t.Fatalf("browser received %q: %v", res.Message, err)
	}
	checkMapped(t, ce, ev)
	if res.ID != ce.ID || res.Subject != "/robot/leg/" || res.Data != "to the browser" {
		t.Errorf("browser read id %q subject %q data %q; the event is %+v", res.ID, res.Subject, res.Data, ce)
	}
	if want := ce.ID + " to the browser"; res.Text != want {
		t.Errorf("page shows %q, want %q", res.Text, want)
	}
}

// runBrowser runs headless Chromium on url, with a profile of its own,
// until the end of the test. The browser and its helper processes share a
// process group that the end of the test kills; its output is logged when
// the test failed.
func runBrowser(t *testing.T, bin, url string) {
	t.Helper()
	profile := t.TempDir()
	// The deadline ends the browser even if the test's cleanup never came.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, bin,
		"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, url)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Wait returns even if a stray helper process holds the output pipe.
	cmd.WaitDelay = waitTimeout
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	// Registered after TempDir, this runs before the profile is removed.
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("chromium output:\n%s", out.Bytes())
		}
	})
}
