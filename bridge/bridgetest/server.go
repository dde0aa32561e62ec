package bridgetest

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/syncbuf"
	"github.com/rsbd/rsbd/internal/testport"
	"github.com/rsbd/rsbd/internal/testutil"
)

// Server is a broker server run as a child process on a loopback port.
type Server struct {
	t    testing.TB
	path string
	args func(port int) []string
	// Port is the server's TCP port, kept across restarts.
	Port int
	// Dir is a temporary directory of the server's own.
	Dir  string
	mu   sync.Mutex
	cmd  *exec.Cmd
	logs *syncbuf.Buffer
}

// StartServer starts the program of Debian package pkg (skipping the test
// without it, failing under CI=true) with the arguments args gives for a
// free port, waits until the port accepts connections and kills the server
// at the end of the test.
func StartServer(t testing.TB, pkg, name string, args func(port, dir string) []string) *Server {
	t.Helper()
	path := testutil.Program(t, pkg, name)
	_, port, release := testport.Hold(t)
	release()
	dir := t.TempDir()
	s := &Server{t: t, path: path, Port: port, Dir: dir,
		args: func(p int) []string { return args(strconv.Itoa(p), dir) }}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Addr returns "127.0.0.1:PORT".
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// Start starts the server (again) on its port and waits until it accepts.
func (s *Server) Start() {
	s.t.Helper()
	s.mu.Lock()
	s.logs = &syncbuf.Buffer{}
	cmd := exec.Command(s.path, s.args(s.Port)...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		s.t.Fatalf("%s: %v", s.path, err)
	}
	s.cmd = cmd
	s.mu.Unlock()
	testutil.WaitFor(s.t, Timeout, s.path+" listening", func() bool {
		c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// Stop kills the server and waits for it; it is idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Kill)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Logs returns what the server wrote since it last started.
func (s *Server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}
