package main

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/introspection"
	"github.com/rsbd/rsbd/scope"
)

// TestDaemonWebAndStatus runs rsbd with --web-addr next to a second
// daemon: its page and API serve the cluster's participants, both daemons
// answer the daemon survey with their peers, and the daemon shows in
// introspection as a process of its own.
func TestDaemonWebAndStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("rsbd processes are not started with -short")
	}
	bin := testutil.Build(t, "github.com/rsbd/rsbd/cmd/rsbd")
	pool := clienttest.PrivatePool()
	common := []string{"--local", "--group-pool", pool.PoolBase.String() + ":" + strconv.Itoa(int(pool.PoolPort)),
		"--socket-addr", "127.0.0.1:0", "--gossip-addr", "127.0.0.1:0", "--data-addr", "127.0.0.1:0",
		"--metrics-addr", "127.0.0.1:0", "--log-level", "warn"}
	a := testutil.StartDaemon(t, testutil.DaemonSpec{Bin: bin, Name: "web-a"},
		append(common, "--name", "web-a", "--web-addr", "127.0.0.1:0")...)
	b := testutil.StartDaemon(t, testutil.DaemonSpec{Bin: bin, Name: "web-b"},
		append(common, "--name", "web-b", "--join", a.Info().Gossip)...)
	if a.Info().Web == "" || b.Info().Web != "" {
		t.Fatalf("ready files: web %q and %q", a.Info().Web, b.Info().Web)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	bus, err := client.Dial(ctx, "socket://"+b.Info().Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	if _, err := bus.NewListener(scope.MustParse("/web/seen")); err != nil {
		t.Fatal(err)
	}
	base := "http://" + a.Info().Web
	var body string
	testutil.WaitForMsg(t, 60*time.Second, func() string { return "the listener and both daemons in " + body }, func() bool {
		body = get(t, base+"/api/introspection/snapshot")
		return strings.Contains(body, `"scope":"/web/seen/"`) && strings.Count(body, `"scope":"/__rsb/rsbd/daemons/"`) == 2
	})
	if page := get(t, base+"/"); !strings.Contains(page, "<title>rsbd") {
		t.Errorf("the page: %.200s", page)
	}
	var ds []introspection.DaemonStatus
	testutil.WaitFor(t, 30*time.Second, "both daemons' status", func() bool {
		ds, err = introspection.SurveyDaemons(ctx, bus, time.Second)
		return err == nil && len(ds) == 2 && len(ds[0].Peers) == 1 && len(ds[1].Peers) == 1
	})
	if ds[0].Name != "web-a" || ds[1].Peers[0].Name != "web-a" || ds[0].Socket != a.Info().Socket || ds[1].Connections != 1 {
		t.Fatalf("statuses %+v", ds)
	}
	if !slices.ContainsFunc(ds[1].Received, func(g introspection.Group) bool { return slices.Contains(g.Scopes, "/web/seen/") }) {
		t.Errorf("web-b receives groups %+v, none for /web/seen/", ds[1].Received)
	}
	m := a.Metrics()
	for _, series := range []string{`rsbd_introspection_drops_total{reason="survey_queue"}`,
		`rsbd_introspection_drops_total{reason="daemon_survey_queue"}`} {
		if v, ok := m[series]; !ok || v != 0 {
			t.Errorf("%s = %v (exported %v)", series, v, ok)
		}
	}
	var env struct {
		Data []introspection.DaemonStatus `json:"data"`
	}
	if err := json.Unmarshal([]byte(get(t, base+"/api/daemons")), &env); err != nil || len(env.Data) != 2 {
		t.Fatalf("/api/daemons: %v %+v", err, env)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	_, body := testutil.Get(t, url)
	return body
}
