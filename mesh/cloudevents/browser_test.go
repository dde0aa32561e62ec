//go:build linux

package cloudevents

import (
	"encoding/json"
	"io"
	"net/http"
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

// TestBrowserSubscribesByWebSocket checks a real browser's WebSocket
// (headless Chromium) subscribes to the gateway with the cloudevents.json
// subprotocol and receives an RSB event as a structured CloudEvent.
func TestBrowserSubscribesByWebSocket(t *testing.T) {
	reports := make(chan testutil.BrowserReport, 1)
	e := startWith(t, Config{}, map[string]http.Handler{
		browserPage: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, testutil.WebSocketPage(`"ws://" + location.host + "/robot/"`, Subprotocol, browserReport))
		}),
		browserReport: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var res testutil.BrowserReport
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
	testutil.RunBrowser(t, e.srv.URL+browserPage)

	testutil.WaitFor(t, testutil.BrowserStartTimeout, "the browser's subscription", func() bool { return e.g.Stats().Subscribers == 1 })
	ev := e.publishRSB(t, "/robot/leg/", "to the browser")

	var res testutil.BrowserReport
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
