package brokertest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
)

// Mosquitto is a mosquitto broker a test started on a loopback port.
type Mosquitto struct {
	bin, conf, addr string
	p               *proc
}

// StartMosquitto starts mosquitto on a free loopback port, anonymous
// access allowed. With persist, it keeps its sessions and queued messages
// in a file of the test's temporary directory, so a restart loses none.
// The test's cleanup stops it.
func StartMosquitto(t testing.TB, persist bool) *Mosquitto {
	t.Helper()
	bin := testutil.Program(t, "mosquitto", "mosquitto")
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m := &Mosquitto{bin: bin, conf: filepath.Join(dir, "mosquitto.conf"), addr: hostPort(port)}
	conf := fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n", port)
	if persist {
		// Run as root, mosquitto drops to the mosquitto user, which cannot
		// write the test's directory; "user" keeps the starting user.
		conf += fmt.Sprintf("persistence true\npersistence_location %s/\nautosave_interval 0\nuser %s\n", dir, currentUser())
	} else {
		conf += "persistence false\n"
	}
	if err := os.WriteFile(m.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.p.kill(syscall.SIGKILL) })
	return m
}

// currentUser returns the name of the user running the tests.
func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

// Addr returns the broker's host:port.
func (m *Mosquitto) Addr() string { return m.addr }

// URL returns the broker's mqtt:// URL.
func (m *Mosquitto) URL() string { return "mqtt://" + m.addr }

// Output returns what the broker logged so far.
func (m *Mosquitto) Output() string { return m.p.out.String() }

// Restart stops the broker gracefully (it saves its persistent state on
// SIGTERM) and starts it again on the same port and files.
func (m *Mosquitto) Restart(t testing.TB) {
	t.Helper()
	if err := m.p.kill(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := m.start(); err != nil {
		t.Fatal(err)
	}
}

// RestartAsync restarts the broker as Restart does, on a goroutine of its
// own, while the test goes on; the channel gives the outcome.
func (m *Mosquitto) RestartAsync() <-chan error {
	done := make(chan error, 1)
	go func() {
		if err := m.p.kill(syscall.SIGTERM); err != nil {
			done <- err
			return
		}
		done <- m.start()
	}()
	return done
}

// Stop stops the broker; Restart starts it again.
func (m *Mosquitto) Stop(t testing.TB) {
	t.Helper()
	if err := m.p.kill(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// Start starts a stopped broker again.
func (m *Mosquitto) Start(t testing.TB) {
	t.Helper()
	if err := m.start(); err != nil {
		t.Fatal(err)
	}
}

// start runs mosquitto and waits for its port.
func (m *Mosquitto) start() error {
	p, err := start(exec.Command(m.bin, "-c", m.conf))
	if err != nil {
		return err
	}
	m.p = p
	return p.waitPort(m.addr)
}
