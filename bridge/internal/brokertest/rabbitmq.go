package brokertest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
)

// rabbitBin is where Debian's rabbitmq-server package puts the server
// script that runs in the foreground as the calling user (the one in
// /usr/sbin switches to the rabbitmq user).
const rabbitBin = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// ErrNoRabbitMQ: the rabbitmq-server package is not installed.
var ErrNoRabbitMQ = errors.New("brokertest: rabbitmq-server not installed")

// RabbitMQ is a RabbitMQ node a test started on a loopback port, with the
// AMQP 1.0 plugin enabled: AMQP 0.9.1 and 1.0 share its port. Its Erlang
// port mapper runs as a child of the test on a port of its own, so
// nodes of other tests never meet it, and is the only one the node uses.
// The node and the port mapper are children of the test binary and die
// with it, so a test that times out or crashes leaves neither behind.
type RabbitMQ struct {
	dir  string
	port int
	env  []string
	epmd *proc
	node *proc
}

// StartRabbitMQ starts a node with its files under dir, without a test
// (for TestMain); Stop ends it. Without the Debian package the error
// wraps ErrNoRabbitMQ.
func StartRabbitMQ(dir string) (*RabbitMQ, error) {
	if _, err := os.Stat(rabbitBin); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoRabbitMQ, err)
	}
	ports := make([]int, 3)
	for i := range ports {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	r := &RabbitMQ{dir: dir, port: ports[0]}
	plugins := filepath.Join(dir, "enabled_plugins")
	if err := os.WriteFile(plugins, []byte("[rabbitmq_amqp1_0].\n"), 0o600); err != nil {
		return nil, err
	}
	r.env = append(os.Environ(),
		"HOME="+dir,
		"RABBITMQ_NODE_PORT="+strconv.Itoa(ports[0]),
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODENAME=rsbdtest"+strconv.Itoa(ports[0])+"@localhost",
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(ports[1]),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+plugins,
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"ERL_EPMD_PORT="+strconv.Itoa(ports[2]),
		// No Erlang program of the node starts a port mapper of its own:
		// "epmd -daemon" leaves the process group and outlives the test.
		// The node, and the helper it runs to check for one, use the
		// test's.
		"ERL_FLAGS=-start_epmd false",
		// The start script then execs the node instead of running it in
		// the background, so the node is the test's child and dies with
		// the test binary (Pdeathsig) rather than living on orphaned.
		"RUNNING_UNDER_SYSTEMD=true",
	)
	epmd, err := start(r.command("epmd", "-port", strconv.Itoa(ports[2])))
	if err != nil {
		return nil, err
	}
	r.epmd = epmd
	if err := epmd.waitPort(hostPort(ports[2])); err != nil {
		r.Stop()
		return nil, err
	}
	if err := r.start(); err != nil {
		r.Stop()
		return nil, err
	}
	return r, nil
}

// StartRabbitMQTest starts a node for one test; the test's cleanup stops
// it. Without the Debian package the test skips, or fails with CI=true.
func StartRabbitMQTest(t testing.TB) *RabbitMQ {
	t.Helper()
	testutil.Program(t, "rabbitmq-server", "rabbitmq-server", rabbitBin)
	r, err := StartRabbitMQ(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// command returns the command running name in the node's environment.
func (r *RabbitMQ) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = r.env
	cmd.Dir = r.dir
	return cmd
}

// start runs the node and waits for its AMQP port.
func (r *RabbitMQ) start() error {
	p, err := start(r.command(rabbitBin))
	if err != nil {
		return err
	}
	r.node = p
	return p.waitPort(r.Addr())
}

// Addr returns the node's AMQP host:port.
func (r *RabbitMQ) Addr() string { return hostPort(r.port) }

// URL091 returns the node's AMQP 0.9.1 URL with the default user.
func (r *RabbitMQ) URL091() string { return "amqp://guest:guest@" + r.Addr() + "/" }

// URL10 returns the node's AMQP 1.0 URL with the default user.
func (r *RabbitMQ) URL10() string { return "amqp://guest:guest@" + r.Addr() }

// Output returns what the node printed so far.
func (r *RabbitMQ) Output() string {
	if r.node == nil {
		return ""
	}
	return r.node.out.String()
}

// Restart stops the node (SIGTERM: a clean shutdown that keeps durable
// queues and persistent messages) and starts it again on the same port
// and files.
func (r *RabbitMQ) Restart(t testing.TB) {
	t.Helper()
	if err := r.node.kill(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := r.start(); err != nil {
		t.Fatal(err)
	}
}

// RestartAsync restarts the node as Restart does, on a goroutine of its
// own, while the test goes on; the channel gives the outcome.
func (r *RabbitMQ) RestartAsync() <-chan error {
	done := make(chan error, 1)
	go func() {
		if err := r.node.kill(syscall.SIGTERM); err != nil {
			done <- err
			return
		}
		done <- r.start()
	}()
	return done
}

// Stop kills the node and its port mapper. Stop is idempotent.
func (r *RabbitMQ) Stop() {
	if r.node != nil {
		_ = r.node.kill(syscall.SIGTERM)
	}
	if r.epmd != nil {
		_ = r.epmd.kill(syscall.SIGKILL)
	}
}

// shared is the node a test package shares.
var shared struct {
	sync.Mutex
	dir  string
	node *RabbitMQ
	err  error
}

// Shared returns the node the tests of a package share, started by its
// first caller; the package's TestMain calls StopShared after the tests.
// Without the Debian package the test skips, or fails with CI=true.
func Shared(t testing.TB) *RabbitMQ {
	t.Helper()
	testutil.Program(t, "rabbitmq-server", "rabbitmq-server", rabbitBin)
	shared.Lock()
	defer shared.Unlock()
	if shared.node == nil && shared.err == nil {
		shared.dir, shared.err = os.MkdirTemp("", "rsbd-rabbitmq-")
		if shared.err == nil {
			shared.node, shared.err = StartRabbitMQ(shared.dir)
		}
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.node
}

// StopShared stops the shared node, if one was started, and removes its
// files.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.node != nil {
		shared.node.Stop()
		shared.node = nil
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
		shared.dir = ""
	}
}

// Main is the TestMain of a package whose tests share a node: it runs
// the tests, stops the shared node and exits with the tests' code.
func Main(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}
