package interop

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/node"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

const python = "/usr/bin/python3"

// rsbPython returns the rsb-python directory or skips the test.
func rsbPython(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("RSBD_RSB_PYTHON")
	if dir == "" {
		t.Skip("RSBD_RSB_PYTHON not set: no rsb-python to test against")
	}
	cmd := exec.Command(python, "-c", "import rsb")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("rsb-python at %s does not import: %v\n%s", dir, err, out)
	}
	return dir
}

// startNodes starts k joined nodes with socket servers on loopback.
func startNodes(t testing.TB, k int) []*node.Node {
	t.Helper()
	pool := group.DefaultConfig()
	pool.PoolBase = netip.AddrFrom4([4]byte{239, 255, byte(rand.IntN(200) + 20), 0})
	pool.PoolPort = uint16(20000 + rand.IntN(12000))
	var nodes []*node.Node
	for i := 0; i < k; i++ {
		c := node.Config{
			SocketAddr: "127.0.0.1:0", GossipAddr: "127.0.0.1:0", DataAddr: "127.0.0.1:0",
			LocalProfile: true, Group: pool,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		}
		if i > 0 {
			c.Join = []string{nodes[0].GossipAddr().String()}
		}
		n, err := node.New(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		nodes = append(nodes, n)
	}
	testutil.WaitFor(t, 20*time.Second, "cluster", func() bool {
		for _, n := range nodes {
			if len(n.Members()) != k-1 {
				return false
			}
		}
		return true
	})
	return nodes
}

// pyProc is a running python client whose stdout lines are collected.
type pyProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

// runPython starts script with the rsb socket transport pointed at addr.
func runPython(t testing.TB, dir, script string, addr net.Addr, server string, args ...string) *pyProc {
	t.Helper()
	path := filepath.Join(t.TempDir(), "client.py")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	port := addr.(*net.TCPAddr).Port
	cmd := exec.Command(python, append([]string{"-u", path}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir,
		"RSB_TRANSPORT_SOCKET_ENABLED=1", "RSB_TRANSPORT_SOCKET_HOST=127.0.0.1",
		fmt.Sprintf("RSB_TRANSPORT_SOCKET_PORT=%d", port), "RSB_TRANSPORT_SOCKET_SERVER="+server)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	p := &pyProc{cmd: cmd, done: make(chan struct{})}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
		}
		cmd.Wait()
		if t.Failed() {
			t.Logf("python stdout: %q\nstderr: %s", p.output(), stderr.String())
		}
	})
	return p
}

func (p *pyProc) output() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

func (p *pyProc) has(line string) bool {
	for _, l := range p.output() {
		if l == line {
			return true
		}
	}
	return false
}

// interested reports whether n's socket clients announced a listener on sc.
func interested(n *node.Node, sc string) bool {
	return n.SocketInterest().Matches(scope.MustParse(sc)) && !n.SocketInterest().All
}

// TestPythonInformerToRemoteListener: an unchanged rsb-python informer
// publishes through node A; an rsb-python listener on node B receives the
// events, sub-scope included, after B learnt its interest from the
// introspection Hello. Run with server=0 and with server=auto (rsbd holds
// the port, so the python client falls back to client mode).
func TestPythonInformerToRemoteListener(t *testing.T) {
	dir := rsbPython(t)
	for _, server := range []string{"0", "auto"} {
		t.Run("server="+server, func(t *testing.T) {
			nodes := startNodes(t, 2)
			a, b := nodes[0], nodes[1]
			lst := runPython(t, dir, pyListener, b.SocketAddr(), server, "/example/", "3")
			testutil.WaitFor(t, 20*time.Second, "listener interest at B", func() bool { return interested(b, "/example/") })
			testutil.WaitFor(t, 20*time.Second, "B's interest known at A", func() bool { return a.Wants(scope.MustParse("/example/sub/")) })
			inf := runPython(t, dir, pyInformer, a.SocketAddr(), server, "/example/sub/", "3")
			testutil.WaitFor(t, 20*time.Second, "three events at the python listener", func() bool {
				return lst.has("/example/sub/ hello0") && lst.has("/example/sub/ hello1") && lst.has("/example/sub/ hello2")
			})
			testutil.WaitFor(t, 20*time.Second, "informer done", func() bool { return inf.has("SENT 3") })
		})
	}
}

// TestGoToPythonAndBack: a Go subscriber on node A receives what a python
// informer on node B publishes, and a python listener on node A receives an
// event published by Go on node B.
func TestGoToPythonAndBack(t *testing.T) {
	dir := rsbPython(t)
	nodes := startNodes(t, 2)
	a, b := nodes[0], nodes[1]
	got := make(chan *notification.Event, 4)
	defer a.Subscribe(scope.MustParse("/py/"), func(ev *notification.Event) { got <- ev })()
	testutil.WaitFor(t, 20*time.Second, "A's interest known at B", func() bool { return b.Wants(scope.MustParse("/py/")) })
	runPython(t, dir, pyInformer, b.SocketAddr(), "0", "/py/", "1")
	select {
	case ev := <-got:
		if ev.WireSchema != "utf-8-string" || string(ev.Data) != "hello0" || ev.Scope.String() != "/py/" {
			t.Fatalf("got %s %q on %s", ev.WireSchema, ev.Data, ev.Scope)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no event from the python informer")
	}
	lst := runPython(t, dir, pyListener, a.SocketAddr(), "0", "/go/", "1")
	testutil.WaitFor(t, 20*time.Second, "listener interest at A", func() bool { return interested(a, "/go/") })
	testutil.WaitFor(t, 20*time.Second, "A's interest known at B", func() bool { return b.Wants(scope.MustParse("/go/")) })
	ev := &notification.Event{Scope: scope.MustParse("/go/x/"), WireSchema: "utf-8-string", Data: []byte("from go"),
		ID: notification.EventID{SenderID: notification.NewParticipantID()}}
	ev.MetaData.CreateTime = time.Now().UnixMicro()
	ev.MetaData.SendTime = ev.MetaData.CreateTime
	if err := b.Publish(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "python listener got the Go event", func() bool { return lst.has("/go/x/ from go") })
}

// TestPythonRPCAcrossNodes: an rsb-python LocalServer behind node A answers
// an rsb-python RemoteServer behind node B, including an error reply.
func TestPythonRPCAcrossNodes(t *testing.T) {
	dir := rsbPython(t)
	nodes := startNodes(t, 2)
	a, b := nodes[0], nodes[1]
	runPython(t, dir, pyServer, a.SocketAddr(), "0", "/rpc/svc/")
	testutil.WaitFor(t, 20*time.Second, "server interest at A", func() bool { return interested(a, "/rpc/svc/") })
	testutil.WaitFor(t, 20*time.Second, "A's interest known at B", func() bool { return b.Wants(scope.MustParse("/rpc/svc/echo/")) })
	cl := runPython(t, dir, pyClient, b.SocketAddr(), "0", "/rpc/svc/")
	testutil.WaitFor(t, 20*time.Second, "client results", func() bool { return cl.has("RESULT hi") && cl.has("ERROR boom") })
}
