package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rsbd/rsbd/config"
)

// TestGatewayAgentsSetting: --gateway-a2a takes off, on or the default
// agent's scope; anything else is a configuration error naming the key.
func TestGatewayAgentsSetting(t *testing.T) {
	for arg, want := range map[string]gatewayAgents{
		"off": {}, "on": {on: true}, "/agents/echo": {on: true, defaultAgent: "/agents/echo/"},
	} {
		s, _ := mustSettings(t, "", nil, "--gateway-a2a", arg)
		if s.gatewayAgents != want {
			t.Errorf("--gateway-a2a %s: %+v, want %+v", arg, s.gatewayAgents, want)
		}
	}
	if s, _ := mustSettings(t, "", nil); s.gatewayAgents.on {
		t.Error("agents served by default")
	}
	c, err := load(t, "", nil, "--gateway-a2a", "not a scope")
	if err != nil {
		t.Fatal(err)
	}
	var ve *config.ValueError
	if _, err := parseSettings(c); !errors.As(err, &ve) || ve.Key != keyGatewayA2A {
		t.Errorf("bad scope: %v", err)
	}
}

// The daemon serves A2A beside the gateway with the gateway's TLS and
// tokens: curl over https with the test's CA gets the agent card; a
// JSON-RPC request without a token gets 401, with a token whose publish
// prefixes miss the agent's scope 403, and with one that holds them the
// request is served (its JSON is bad on purpose, so it is answered at once
// without an agent); the refusals count in rsbd_gateway_rejected_total.
func TestGatewayAgentsTLSTokens(t *testing.T) {
	curl := curlPath(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir)
	cert, key, tokens := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "tokens")
	ca.issue(t, 10, false, cert, key)
	if err := os.WriteFile(tokens, []byte("agent-token pub=/agents/\nother-token pub=/other/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startServing(t, filepath.Join(dir, "ready.json"), "--gateway-http", "127.0.0.1:0",
		"--gateway-tls-cert", cert, "--gateway-tls-key", key, "--gateway-token-file", tokens, "--gateway-a2a", "/agents/echo/")
	defer func() {
		d.signals <- syscall.SIGTERM
		<-d.done
	}()
	base := "https://" + d.info.Gateway
	tlsArgs := []string{"--cacert", ca.pemOut}
	ctx, cancel := context.WithTimeout(context.Background(), curlTimeout)
	defer cancel()
	card, err := exec.CommandContext(ctx, curl, append([]string{"-sS", "--max-time", "10"}, append(tlsArgs, base+"/.well-known/agent-card.json")...)...).Output()
	if err != nil || !strings.Contains(string(card), `"url":"`+base+`/.a2a/"`) {
		t.Errorf("agent card over https: %v %s", err, card)
	}
	bad := []string{"-X", "POST", "--data-binary", `{"jsonrpc":`}
	for _, tc := range []struct {
		token, want string
	}{{"", "401"}, {"other-token", "403"}, {"agent-token", "200"}} {
		args := append(append([]string{}, bad...), tlsArgs...)
		if tc.token != "" {
			args = append(args, "-H", "Authorization: Bearer "+tc.token)
		}
		if code, err := curlStatus(t, curl, base+"/.a2a", args...); code != tc.want {
			t.Errorf("token %q: %s %v, want %s", tc.token, code, err, tc.want)
		}
	}
	if m := metricsText(t, d); !strings.Contains(m, `rsbd_gateway_rejected_total{protocol="a2a",reason="no_token"} 1`) ||
		!strings.Contains(m, `rsbd_gateway_rejected_total{protocol="a2a",reason="parse"} 1`) {
		t.Errorf("a2a metrics missing:\n%s", grepLines(m, `protocol="a2a"`))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
