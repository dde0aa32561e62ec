package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/rsbd/rsbd/internal/syncbuf"
	"github.com/rsbd/rsbd/internal/testutil"
)

// devtools is a page of a headless Chromium driven over the DevTools
// protocol: the test reads what the page shows and takes screenshots.
type devtools struct {
	conn *websocket.Conn
	next atomic.Int64
}

// openBrowser runs headless Chromium (Debian's chromium) on url until the
// end of the test and connects to its page. Without chromium the test is
// skipped, or fails under CI=true.
func openBrowser(t *testing.T, url string) *devtools {
	t.Helper()
	bin := testutil.Program(t, "chromium", "chromium", "chromium-browser")
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, bin, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--hide-scrollbars", "--window-size=1440,1000",
		"--remote-debugging-port=0", "--remote-allow-origins=*", "--user-data-dir="+profile, url)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 20 * time.Second
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("chromium output:\n%s", out)
		}
	})
	var port string
	testutil.WaitFor(t, 60*time.Second, "chromium's DevTools port", func() bool {
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		port, _, _ = strings.Cut(string(b), "\n")
		return err == nil && port != ""
	})
	var wsURL string
	testutil.WaitFor(t, 30*time.Second, "the page's DevTools target", func() bool {
		wsURL = pageTarget(port)
		return wsURL != ""
	})
	conn, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadLimit(64 << 20)
	t.Cleanup(func() { conn.CloseNow() })
	return &devtools{conn: conn}
}

// pageTarget returns the DevTools WebSocket URL of the browser's page.
func pageTarget(port string) string {
	resp, err := http.Get("http://127.0.0.1:" + port + "/json/list")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var targets []struct {
		Type string `json:"type"`
		URL  string `json:"webSocketDebuggerUrl"`
	}
	if json.NewDecoder(resp.Body).Decode(&targets) != nil {
		return ""
	}
	for _, tg := range targets {
		if tg.Type == "page" {
			return tg.URL
		}
	}
	return ""
}

// call sends one DevTools command and decodes its result into res.
func (d *devtools) call(method string, params any, res any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := d.next.Add(1)
	req, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := d.conn.Write(ctx, websocket.MessageText, req); err != nil {
		return err
	}
	for {
		_, msg, err := d.conn.Read(ctx)
		if err != nil {
			return err
		}
		var rep struct {
			ID     int64           `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(msg, &rep) != nil || rep.ID != id {
			continue // an event, or the answer to another call
		}
		if rep.Error != nil {
			return fmt.Errorf("%s: %s", method, rep.Error.Message)
		}
		return json.Unmarshal(rep.Result, res)
	}
}

// text returns the text of the element with the given id ("" if none).
func (d *devtools) text(id string) string {
	var res struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	expr := fmt.Sprintf(`(document.getElementById(%q) || {innerText: ""}).innerText`, id)
	if err := d.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res); err != nil {
		return ""
	}
	return res.Result.Value
}

// screenshot returns a PNG of the page.
func (d *devtools) screenshot() ([]byte, error) {
	var res struct {
		Data string `json:"data"`
	}
	if err := d.call("Page.captureScreenshot", map[string]any{"format": "png"}, &res); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(res.Data)
}
