package interop

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/introspection"
	"github.com/rsbd/rsbd/scope"
)

// pySurvey surveys introspection as an RSB tool does, with rsb-python's
// public API: a listener on the participants scope prints each Hello's
// kind and scope and each pong, after a void SURVEY and a "ping" SURVEY.
const pySurvey = `
import sys, time, rsb
base = "/__rsb/introspection/participants/"
def handle(ev):
    d = ev.data
    if hasattr(d, "kind") and hasattr(d, "scope"):
        print("HELLO %s %s %s" % (d.kind, d.scope, d.process.program_name), flush=True)
    elif d == "pong":
        print("PONG %s" % ev.scope.to_string(), flush=True)
with rsb.create_listener(base) as l:
    l.add_handler(handle)
    with rsb.create_informer(base) as inf:
        time.sleep(1)
        inf.publish_event(rsb.Event(scope=rsb.Scope(base), data=None, data_type=type(None), method="SURVEY"))
        inf.publish_event(rsb.Event(scope=rsb.Scope(base), data="ping", data_type=str, method="SURVEY"))
        print("SURVEYED", flush=True)
        sys.stdin.read()
`

// TestPythonSeesGoParticipants: rsb-python surveys through node A and sees
// the Hello of a Go listener connected to node B, and its pong.
func TestPythonSeesGoParticipants(t *testing.T) {
	dir := rsbPython(t)
	nodes := startNodes(t, 2)
	a, b := nodes[0], nodes[1]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	bus, err := client.Dial(ctx, "socket://"+b.SocketAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	if _, err := bus.NewListener(scope.MustParse("/go/intro/")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "B's introspection interest known at A",
		func() bool { return a.Wants(scope.MustParse("/__rsb/introspection/participants/x/")) })
	py := runPython(t, dir, pySurvey, a.SocketAddr(), "0")
	testutil.WaitFor(t, 30*time.Second, "the Go listener's Hello and pong in rsb-python", func() bool {
		var hello, pong bool
		for _, l := range py.output() {
			hello = hello || strings.HasPrefix(l, "HELLO listener /go/intro/ ")
			pong = pong || strings.HasPrefix(l, "PONG /__rsb/introspection/participants/")
		}
		return hello && pong
	})
}

// TestGoSeesPythonParticipants: rsb introspect, connected to node B, shows
// an rsb-python listener connected to node A, RUNNING: its echo server
// answered.
func TestGoSeesPythonParticipants(t *testing.T) {
	dir := rsbPython(t)
	nodes := startNodes(t, 2)
	a, b := nodes[0], nodes[1]
	runPython(t, dir, pyListener, a.SocketAddr(), "0", "/py/intro/", "1000")
	testutil.WaitFor(t, 20*time.Second, "listener interest at A", func() bool { return interested(a, "/py/intro/") })
	rsb := testutil.Build(t, "github.com/rsbd/rsbd/cmd/rsb")
	var out string
	testutil.WaitForMsg(t, 60*time.Second, func() string { return "the python listener in\n" + out }, func() bool {
		o, err := exec.Command(rsb, "introspect", "--response-timeout", "2s", "socket://"+b.SocketAddr().String()).CombinedOutput()
		out = string(o)
		t.Log(out)
		for _, block := range strings.Split(out, "\n├─") {
			if strings.Contains(block, "listener") && strings.Contains(block, "/py/intro/") && strings.Contains(block, "RUNNING") {
				return err == nil
			}
		}
		return false
	})
}

// BenchmarkEchoRoundTrip calls the introspection echo method of an rsb
// logger process (Go) and of an rsb-python listener process through one
// node, one call at a time: the round trip a remote introspection pays to
// measure a process's latency and clock offset.
func BenchmarkEchoRoundTrip(b *testing.B) {
	dir := rsbPython(b)
	nodes := startNodes(b, 1)
	addr := nodes[0].SocketAddr()
	runPython(b, dir, pyListener, addr, "0", "/bench/py/", "1000000")
	logger := exec.Command(testutil.Build(b, "github.com/rsbd/rsbd/cmd/rsb"), "logger", "socket://"+addr.String()+"/bench/go/")
	if err := logger.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { logger.Process.Kill(); logger.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bus, err := client.Dial(ctx, "socket://"+addr.String())
	if err != nil {
		b.Fatal(err)
	}
	defer bus.Close()
	coll, err := introspection.NewCollector(bus, introspection.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer coll.Close()
	targets := map[string]introspection.ProcessRef{}
	testutil.WaitFor(b, 30*time.Second, "both processes", func() bool {
		for _, h := range coll.Snapshot().Hosts {
			for _, p := range h.Processes {
				for _, pt := range p.Participants {
					switch pt.Scope {
					case "/bench/go/":
						targets["go"] = introspection.ProcessRef{HostID: h.ID, PID: p.ID}
					case "/bench/py/":
						targets["python"] = introspection.ProcessRef{HostID: h.ID, PID: p.ID}
					}
				}
			}
		}
		return len(targets) == 2
	})
	for _, name := range []string{"go", "python"} {
		b.Run(name, func(b *testing.B) {
			sc, err := client.IntrospectionProcessScope(targets[name].HostID, targets[name].PID)
			if err != nil {
				b.Fatal(err)
			}
			rs, err := bus.NewRemoteServer(sc)
			if err != nil {
				b.Fatal(err)
			}
			defer rs.Close()
			if _, err := rs.CallEvent(ctx, client.EchoMethod, nil); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for b.Loop() {
				if _, err := rs.CallEvent(ctx, client.EchoMethod, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/call")
		})
	}
}
