package interop

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/internal/testutil"
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
