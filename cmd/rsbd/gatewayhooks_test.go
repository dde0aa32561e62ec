package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/config"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/mesh/cloudevents"
)

// Webhook sections of a file and the environment become the gateway's
// webhooks, sorted by name, and are no unknown keys.
func TestGatewayWebhookSettings(t *testing.T) {
	file := "[rsbd.gateway.webhook.arm]\nscope = /robot/arm/\nurl = http://hooks.example/arm\n" +
		`filter = {"prefix":{"type":"com.example."}}` + "\ndeadletter = /dead/\nvalidate = false\n"
	s, c := mustSettings(t, file, []string{"RSB_RSBD_GATEWAY_WEBHOOK_CAMERA_SCOPE=/camera/",
		"RSB_RSBD_GATEWAY_WEBHOOK_CAMERA_URL=https://hooks.example/cam"}, "--gateway-http", "127.0.0.1:0")
	want := []namedWebhook{
		{name: "arm", cfg: cloudevents.WebhookConfig{Scope: "/robot/arm/", URL: "http://hooks.example/arm",
			Filter: `{"prefix":{"type":"com.example."}}`, DeadLetter: "/dead/", SkipValidation: true}},
		{name: "camera", cfg: cloudevents.WebhookConfig{Scope: "/camera/", URL: "https://hooks.example/cam"}},
	}
	if len(s.gatewayHooks) != len(want) || s.gatewayHooks[0] != want[0] || s.gatewayHooks[1] != want[1] {
		t.Fatalf("webhooks %+v, want %+v", s.gatewayHooks, want)
	}
	if u := unknownKeys(c); len(u) != 0 {
		t.Errorf("unknown keys %q", u)
	}
}

// Every invalid webhook is a configuration error naming its key and why.
func TestGatewayWebhookSettingsInvalid(t *testing.T) {
	for _, tt := range []struct{ file, args, want string }{
		{"[rsbd.gateway.webhook.a]\nurl = http://x/\n", "--gateway-http=:0", "rsbd.gateway.webhook.a.scope"},
		{"[rsbd.gateway.webhook.a]\nscope = /a/\n", "--gateway-http=:0", "rsbd.gateway.webhook.a.url"},
		{"[rsbd.gateway.webhook.a]\nscope = /a/\nurl = ftp://x/\n", "--gateway-http=:0", "not an http(s) URL"},
		{"[rsbd.gateway.webhook.a]\nscope = /a/\nurl = http://x/\nfilter = {\n", "--gateway-http=:0", "rsbd.gateway.webhook.a.filter"},
		{"[rsbd.gateway.webhook.a]\nscope = /a/\nurl = http://x/\ndeadletter = /a/d/\n", "--gateway-http=:0", "dead-letter scope"},
		{"[rsbd.gateway.webhook.a]\nscope = /a/\nurl = http://x/\nvalidate = maybe\n", "--gateway-http=:0", "rsbd.gateway.webhook.a.validate"},
		{"[rsbd.gateway.webhook.a]\nscop = /a/\nurl = http://x/\n", "--gateway-http=:0", "rsbd.gateway.webhook.a.scop"},
		{"[rsbd.gateway]\nwebhook.url = http://x/\n", "--gateway-http=:0", "rsbd.gateway.webhook.url"},
		{"[rsbd.gateway.webhook.a]\nscope = /a/\nurl = http://x/\n", "--gateway-http=off", "without rsbd.gateway.http"},
	} {
		c, err := load(t, tt.file, nil, tt.args)
		if err != nil {
			t.Fatal(err)
		}
		_, err = parseSettings(c)
		if !errors.Is(err, config.ErrBadValue) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want an error with %q", tt.file, err, tt.want)
		}
	}
	// The daemon refuses to start with one, with the exit code of every
	// configuration error, and --print-config shows the webhook and why.
	env := []string{"RSB_RSBD_GATEWAY_WEBHOOK_A_SCOPE=/a/", "RSB_RSBD_GATEWAY_WEBHOOK_A_URL=ftp://x/"}
	if code, _, stderr := runArgs(t, nil, env, "--gateway-http", "127.0.0.1:0"); code != exitUsage || !strings.Contains(stderr, "rsbd.gateway.webhook.a.url") {
		t.Errorf("exit %d, want %d:\n%s", code, exitUsage, stderr)
	}
	code, stdout, _ := runArgs(t, nil, env, "--print-config", "--gateway-http", "127.0.0.1:0")
	if code != exitUsage || !strings.Contains(stdout, "rsbd.gateway.webhook.a.url = ftp://x/  # env RSB_RSBD_GATEWAY_WEBHOOK_A_URL") ||
		!strings.Contains(stdout, "# error: ") {
		t.Errorf("--print-config exit %d:\n%s", code, stdout)
	}
}

// The daemon starts the webhooks of its configuration with the gateway:
// an event POSTed on the webhook's scope reaches the target, after the
// validation handshake.
func TestGatewayWebhookFromConfig(t *testing.T) {
	hooked := make(chan string, 16)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			w.Header().Set("WebHook-Allowed-Origin", "*")
			return
		}
		body, _ := io.ReadAll(r.Body)
		if ce, err := cloudevent.Unmarshal(body); err == nil {
			select {
			case hooked <- ce.Type:
			default:
			}
		}
	}))
	defer target.Close()
	env := []string{"RSB_RSBD_GATEWAY_WEBHOOK_ARM_SCOPE=/robot/arm/", "RSB_RSBD_GATEWAY_WEBHOOK_ARM_URL=" + target.URL,
		`RSB_RSBD_GATEWAY_WEBHOOK_ARM_FILTER={"prefix":{"type":"com.example."}}`}
	d := startServingEnv(t, filepath.Join(t.TempDir(), "ready.json"), env, "--gateway-http", "127.0.0.1:0")
	defer func() {
		d.signals <- syscall.SIGTERM
		<-d.done
	}()
	post := func(typ string) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+d.info.Gateway+"/robot/arm/", strings.NewReader("x"))
		req.Header = http.Header{"Content-Type": {"text/plain"}, "Ce-Specversion": {"1.0"},
			"Ce-Id": {"1"}, "Ce-Source": {"/test"}, "Ce-Type": {typ}}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	testutil.WaitFor(t, 20*time.Second, "the configured webhook's delivery", func() bool {
		post("org.other.t")
		post("com.example.t")
		select {
		case typ := <-hooked:
			if typ != "com.example.t" {
				t.Fatalf("the filter passed %s", typ)
			}
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
	if !strings.Contains(d.stderr.String(), `"msg":"gateway webhook started","name":"arm"`) {
		t.Errorf("no start logged:\n%s", d.stderr.String())
	}
}
