package kafka_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	"github.com/rsbd/rsbd/internal/testutil"
)

// kcat runs Debian's kcat (librdkafka, a client that is not franz-go)
// against k with stdin as input and returns its output.
func kcat(t *testing.T, k *cluster, stdin string, args ...string) string {
	t.Helper()
	path := testutil.Program(t, "kcat", "kcat")
	cmd := exec.Command(path, append([]string{"-b", k.addr()}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kcat %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestKcatProducesAttributeLessAndBinary(t *testing.T) {
	k := startCluster(t)
	bus := bridgetest.Bus(t)
	kcat(t, k, "{\"temp\":21.5}\nhello world\n", "-P", "-t", "plain")
	kcat(t, k, "{\"ce\":true}\n", "-P", "-t", "plain", "-H", "ce_specversion=1.0", "-H", "ce_id=kcat-1",
		"-H", "ce_source=/kcat", "-H", "ce_type=com.example.kcat", "-H", "ce_myext=forty-two",
		"-H", "content-type=application/json", "-k", "the-key")
	rd := bridgetest.Reader(t, bus, "/kcat/")
	cfg := k.config("kcat-in", bridge.FormatBinary)
	cfg.In = bridge.Route{Scope: "/kcat/", Address: "plain"}
	bridgetest.Run(t, bus, cfg, nil)

	_, e := bridgetest.ReadCE(t, rd)
	if e.ID != "plain-0-0" || e.Source != "/kafka/plain" || e.Type != bridge.FallbackType ||
		e.DataContentType != bridge.ContentJSON || string(e.Data) != `{"temp":21.5}` || e.Time == "" {
		t.Errorf("attribute-less JSON: %+v", e)
	}
	_, e = bridgetest.ReadCE(t, rd)
	if e.ID != "plain-0-1" || e.DataContentType != bridge.ContentText || string(e.Data) != "hello world" {
		t.Errorf("attribute-less text: %+v", e)
	}
	_, e = bridgetest.ReadCE(t, rd)
	if e.ID != "kcat-1" || e.Source != "/kcat" || e.Type != "com.example.kcat" || e.Extensions["myext"] != "forty-two" ||
		e.DataContentType != "application/json" || e.Extensions["kafkaoffset"] != "2" {
		t.Errorf("binary from kcat: %+v", e)
	}
}

func TestKcatConsumesBinary(t *testing.T) {
	k := startCluster(t)
	bus := bridgetest.Bus(t)
	cfg := k.config("kcat-out", bridge.FormatBinary)
	cfg.Out = bridge.Route{Scope: "/to-kcat/", Address: "for-kcat"}
	m, _ := bridge.NewMetrics(nil)
	bridgetest.Run(t, bus, cfg, m)
	bridgetest.PublishCE(t, bridgetest.Informer(t, bus, "/to-kcat/"), bridgetest.Event(9, 20))
	testutil.WaitFor(t, bridgetest.Timeout, "sent", func() bool { return bridgetest.Value(m.Messages, "kcat-out", bridge.DirOut) == 1 })
	out := kcat(t, k, "", "-C", "-t", "for-kcat", "-o", "beginning", "-e", "-q", "-f", "%k|%h|%s\n")
	for _, want := range []string{"item-9|", "ce_specversion=1.0", "ce_id=ev-9", "ce_source=/test/source", "ce_seq=9",
		"ce_time=2026-01-02T03:04:05.123456Z", "content-type=application/json", `|{"n":9,`} {
		if !strings.Contains(out, want) {
			t.Errorf("kcat read %q, without %q", out, want)
		}
	}
}
