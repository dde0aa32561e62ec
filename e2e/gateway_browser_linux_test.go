package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/mesh/cloudevents"
)

// testGatewayBrowser checks, on the cluster of TestGatewayAcrossTwoDaemons,
// that a page in headless Chromium, served from another origin the gateway
// admits (--gateway-origins), subscribes at A's gateway gw with
// new WebSocket(url, "cloudevents.json") and receives an event bp
// publishes at B.
func testGatewayBrowser(t *testing.T, gw string, bp *client) {
	t.Helper()
	reports := make(chan testutil.BrowserReport, 1)
	mux := http.NewServeMux()
	wsURL := `"ws://` + gw[len("http://"):] + `/robot/browser/"`
	mux.HandleFunc("/page.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, testutil.WebSocketPage(wsURL, cloudevents.Subprotocol, "/report"))
	})
	mux.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
		var rep testutil.BrowserReport
		if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
			rep.Error = "bad report: " + err.Error()
		}
		select {
		case reports <- rep:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.Handle("/favicon.ico", http.NotFoundHandler())
	pages := httptest.NewServer(mux)
	defer pages.Close()
	testutil.RunBrowser(t, pages.URL+"/page.html")

	var rep testutil.BrowserReport
	testutil.WaitFor(t, 60*time.Second, "B's event in the browser at A", func() bool {
		bp.publish("/robot/browser/", schemaText, []byte("to the browser"))
		select {
		case rep = <-reports:
			return true
		case <-time.After(200 * time.Millisecond):
			return false
		}
	})
	if rep.Error != "" {
		t.Fatalf("browser: %s", rep.Error)
	}
	if rep.Protocol != cloudevents.Subprotocol || rep.Subject != "/robot/browser/" || rep.Data != "to the browser" ||
		rep.Text != rep.ID+" to the browser" {
		t.Errorf("browser report %+v", rep)
	}
}
