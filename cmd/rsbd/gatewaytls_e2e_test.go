package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/mesh/cloudevents"
)

// curlTimeout bounds every curl run of these tests.
const curlTimeout = 20 * time.Second

// curlPath returns the path of the curl binary; without one the test is
// skipped, or fails under CI=true.
func curlPath(t *testing.T) string {
	t.Helper()
	return testutil.Program(t, "curl", "curl")
}

// curlStatus runs curl with args plus a request to url and returns the
// HTTP status it got ("000": no response) and its error.
func curlStatus(t *testing.T, curl, url string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), curlTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, curl, append(append([]string{"-sS", "-o", "/dev/null", "-w", "%{http_code}",
		"--max-time", "10"}, args...), url)...).Output()
	return string(out), err
}

// metricsText returns the daemon's /metrics page.
func metricsText(t *testing.T, d serving) string {
	t.Helper()
	resp, err := http.Get("http://" + d.info.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// The daemon serves the gateway over TLS with a token file: curl with the
// test's CA publishes over https and subscribes over SSE; a token limited
// to /robot/ is refused on /other/ (403) and receives nothing from it; a
// request without a token gets 401; the token file is reloaded on SIGHUP.
func TestGatewayTLSCurl(t *testing.T) {
	curl := curlPath(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir)
	cert, key, tokens := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "tokens")
	ca.issue(t, 10, false, cert, key)
	if err := os.WriteFile(tokens, []byte("robot-token pub=/robot/ sub=/robot/\nother-token pub=/other/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startServing(t, filepath.Join(dir, "ready.json"), "--gateway-http", "127.0.0.1:0",
		"--gateway-tls-cert", cert, "--gateway-tls-key", key, "--gateway-token-file", tokens)
	defer func() {
		d.signals <- syscall.SIGTERM
		<-d.done
	}()
	base := "https://" + d.info.Gateway
	tlsArgs := []string{"--cacert", ca.pemOut}
	robot := append([]string{"-H", "Authorization: Bearer robot-token"}, tlsArgs...)
	post := []string{"-X", "POST", "-H", "Content-Type: text/plain", "-H", "ce-specversion: 1.0", "-H", "ce-id: 1",
		"-H", "ce-source: /curl", "-H", "ce-type: t", "--data-binary", "over tls"}

	ctx, cancel := context.WithTimeout(context.Background(), curlTimeout)
	defer cancel()
	sse := exec.CommandContext(ctx, curl, append(append([]string{"-sS", "-N"}, robot...), base+"/robot/")...)
	out, err := sse.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sse.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sse.Process.Kill(); _ = sse.Wait() }()
	testutil.WaitFor(t, curlTimeout, "the SSE subscriber", func() bool {
		return strings.Contains(metricsText(t, d), `rsbd_gateway_subscribers{protocol="cloudevents"} 1`)
	})

	for _, c := range []struct {
		name, path, want string
		args             []string
	}{
		{"subscribe /other/ with robot-token", "/other/", "403", robot},
		{"publish /other/ with robot-token", "/other/", "403", append(append([]string{}, post...), robot...)},
		{"publish without token", "/robot/", "401", append(append([]string{}, post...), tlsArgs...)},
		{"publish /other/ with other-token", "/other/", "202",
			append(append([]string{"-H", "Authorization: Bearer other-token"}, post...), tlsArgs...)},
		{"publish /robot/arm/ with robot-token", "/robot/arm/", "202", append(append([]string{}, post...), robot...)},
	} {
		if got, err := curlStatus(t, curl, base+c.path, c.args...); got != c.want {
			t.Fatalf("%s: status %q, want %s (%v)", c.name, got, c.want, err)
		}
	}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		ce, err := cloudevent.Unmarshal([]byte(data))
		if err != nil || ce.Subject != "/robot/arm/" || string(ce.Data) != "over tls" {
			t.Fatalf("SSE event %q (%v), want the one on /robot/arm/", data, err)
		}
		break
	}
	m := metricsText(t, d)
	for _, want := range []string{`rsbd_gateway_rejected_total{protocol="cloudevents",reason="forbidden"} 2`, `rsbd_gateway_rejected_total{protocol="cloudevents",reason="unauthorized"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	// A WebSocket over TLS, its token in the query as a browser sends it.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}, ForceAttemptHTTP2: true}}
	ws, _, err := websocket.Dial(ctx, "wss://"+d.info.Gateway+"/robot/?access_token=robot-token",
		&websocket.DialOptions{HTTPClient: hc, Subprotocols: []string{cloudevents.Subprotocol}})
	if err != nil {
		t.Fatalf("WebSocket over TLS: %v", err)
	}
	ws.CloseNow()

	// Plain HTTP is not served.
	if got, _ := curlStatus(t, curl, "http://"+d.info.Gateway+"/robot/", "-H", "Authorization: Bearer robot-token"); got == "200" {
		t.Error("plain HTTP served")
	}

	// SIGHUP reloads the token file: other-token may then publish on /robot/.
	if err := os.WriteFile(tokens, []byte("other-token pub=/robot/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	other := append(append([]string{"-H", "Authorization: Bearer other-token"}, post...), tlsArgs...)
	testutil.WaitFor(t, curlTimeout, "the reloaded token", func() bool {
		got, _ := curlStatus(t, curl, base+"/robot/x/", other...)
		return got == "202"
	})
	if got, _ := curlStatus(t, curl, base+"/robot/x/", append(append([]string{}, post...), robot...)...); got != "401" {
		t.Errorf("removed token: status %s, want 401", got)
	}
}

// With --gateway-client-ca the gateway requires a client certificate
// signed by that CA: curl without one is refused, with one it publishes.
func TestGatewayClientCertificate(t *testing.T) {
	curl := curlPath(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir)
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	ca.issue(t, 10, false, cert, key)
	ccert, ckey := filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	ca.issue(t, 11, true, ccert, ckey)
	d := startServing(t, filepath.Join(dir, "ready.json"), "--gateway-http", "127.0.0.1:0",
		"--gateway-tls-cert", cert, "--gateway-tls-key", key, "--gateway-client-ca", ca.pemOut)
	defer func() {
		d.signals <- syscall.SIGTERM
		<-d.done
	}()
	url := "https://" + d.info.Gateway + "/robot/"
	post := []string{"--cacert", ca.pemOut, "-X", "POST", "-H", "Content-Type: text/plain", "-H", "ce-specversion: 1.0",
		"-H", "ce-id: 1", "-H", "ce-source: /curl", "-H", "ce-type: t", "--data-binary", "x"}
	if got, err := curlStatus(t, curl, url, post...); err == nil || got == "202" {
		t.Fatalf("no client certificate: status %s, %v", got, err)
	}
	if got, err := curlStatus(t, curl, url, append(post, "--cert", ccert, "--key", ckey)...); got != "202" {
		t.Fatalf("with a client certificate: status %s, %v", got, err)
	}
}
