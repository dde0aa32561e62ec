package testutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeDaemonEnv makes the test binary a fake daemon (see fakeDaemon) in
// the mode it names.
const fakeDaemonEnv = "TESTUTIL_FAKE_DAEMON"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeDaemonEnv); mode != "" {
		os.Exit(fakeDaemon(mode, os.Args[1:]))
	}
	code := m.Run()
	RemoveBinaries()
	os.Exit(code)
}

// fakeDaemon plays a daemon: in mode "exit" it fails at once as one whose
// port is taken; in mode "serve" it serves /metrics and /readyz, writes its
// ready file and exits with code 3 on SIGTERM.
func fakeDaemon(mode string, args []string) int {
	fmt.Printf("fake args %s\n", strings.Join(args, " "))
	fmt.Printf("fake env HOME=%s RSB_CONFIG_FILES=%s EXTRA=%s\n", os.Getenv("HOME"), os.Getenv("RSB_CONFIG_FILES"), os.Getenv("EXTRA"))
	if mode == "exit" {
		fmt.Fprintln(os.Stderr, "fake: listen: address already in use")
		return 4
	}
	var ready string
	for i, a := range args {
		if a == "--ready-file" && i+1 < len(args) {
			ready = args[i+1]
		}
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
		return 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# HELP fake_up Whether it is up.\nfake_up 1\nfake_total{kind=\"a\"} 2.5\n")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	go http.Serve(ln, mux)
	b, _ := json.Marshal(ReadyInfo{PID: os.Getpid(), Version: "fake", Gossip: "g", Data: "d", Metrics: ln.Addr().String()})
	if err := os.WriteFile(ready, b, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
		return 1
	}
	fmt.Println("fake serving")
	<-stop
	fmt.Println("fake stopping")
	return 3
}

// fakeSpec runs the test binary as a fake daemon in mode.
func fakeSpec(t *testing.T, mode string) DaemonSpec {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return DaemonSpec{Bin: exe, Name: "fake", Conf: "x = 1\n", Env: []string{fakeDaemonEnv + "=" + mode, "EXTRA=yes"}}
}

// TestDaemonLifecycle: a daemon starts in its directory with its
// environment, answers on its HTTP endpoints, exits on SIGTERM with its
// code, starts again and dies on SIGKILL.
func TestDaemonLifecycle(t *testing.T) {
	d := StartDaemon(t, fakeSpec(t, "serve"), "--flag", "v")
	info := d.Info()
	if info.Version != "fake" || info.PID <= 0 || info.Metrics == "" {
		t.Fatalf("ready file %+v", info)
	}
	if conf, err := os.ReadFile(d.ConfFile()); err != nil || string(conf) != "x = 1\n" {
		t.Fatalf("rsb.conf %q %v", conf, err)
	}
	if want := "fake args --flag v --ready-file " + filepath.Join(d.Dir(), "ready.json"); !d.Logged(want) {
		t.Fatalf("logs lack %q:\n%s", want, d.Logs())
	}
	if want := fmt.Sprintf("HOME=%s RSB_CONFIG_FILES=%s EXTRA=yes", d.Dir(), d.ConfFile()); !d.Logged("fake env", want) {
		t.Fatalf("logs lack %q:\n%s", want, d.Logs())
	}
	if v := d.Metric(`fake_total{kind="a"}`); v != 2.5 {
		t.Fatalf("fake_total %v, want 2.5 (scraped %v)", v, d.Metrics())
	}
	if code, body, err := d.Get("/readyz"); err != nil || code != http.StatusOK || body != "ok\n" {
		t.Fatalf("/readyz: %d %q %v", code, body, err)
	}
	if code, _, ok := d.Terminate(); !ok || code != 3 {
		t.Fatalf("exit %d (exited %v), want 3", code, ok)
	}
	if !d.Logged("fake stopping") {
		t.Fatalf("no orderly exit:\n%s", d.Logs())
	}
	d.Run()
	if again := d.Info(); again.PID == info.PID || again.Metrics == info.Metrics {
		t.Fatalf("ready file %+v after the restart, %+v before", again, info)
	}
	// The ready file comes before the fake's "serving" line: wait for the
	// line, so that the kill does not race with its printing.
	WaitFor(t, 10*time.Second, "the second run's serving line", func() bool {
		return strings.Count(d.Logs(), "fake serving") == 2
	})
	d.Kill()
	if code, ok := d.Wait(0); !ok || code != -1 {
		t.Fatalf("exit %d (exited %v) after SIGKILL", code, ok)
	}
	if !d.Logged("fake args --flag") || strings.Count(d.Logs(), "fake serving") != 2 {
		t.Fatalf("logs of both runs expected:\n%s", d.Logs())
	}
}

// TestDaemonExitedBeforeReady: Start's error wraps ErrExited and carries
// what this run printed, not the runs before.
func TestDaemonExitedBeforeReady(t *testing.T) {
	d := NewDaemon(t, fakeSpec(t, "exit"))
	for range 2 {
		err := d.Start()
		var ee *ExitedError
		if !errors.Is(err, ErrExited) || !errors.As(err, &ee) {
			t.Fatalf("Start: %v, want an ExitedError", err)
		}
		if ee.Name != "fake" || strings.Count(ee.Output, "address already in use") != 1 || !strings.Contains(err.Error(), "exit status 4") {
			t.Fatalf("error %q (output %q)", err, ee.Output)
		}
	}
	if code, ok := d.Wait(0); !ok || code != 4 {
		t.Fatalf("exit %d (exited %v), want 4", code, ok)
	}
}

// TestDaemonStacks: SIGQUIT makes a daemon print its goroutines and exit.
func TestDaemonStacks(t *testing.T) {
	d := StartDaemon(t, fakeSpec(t, "serve"))
	if st := d.Stacks(); !strings.Contains(st, "goroutine ") || !strings.Contains(st, "SIGQUIT") {
		t.Fatalf("no goroutine dump:\n%s", st)
	}
	if _, ok := d.Wait(0); !ok {
		t.Fatal("the daemon outlived SIGQUIT")
	}
}

// TestReadReady: a ready file counts only whole and of the process asked.
func TestReadReady(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ready.json")
	if _, ok := readReady(path, 7); ok {
		t.Fatal("a missing file counts")
	}
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"pid":7,"gossip":"127.0.0.1:1"`)
	if _, ok := readReady(path, 7); ok {
		t.Fatal("a partial file counts")
	}
	write(`{"pid":7,"gossip":"127.0.0.1:1"}`)
	if _, ok := readReady(path, 8); ok {
		t.Fatal("another process's file counts")
	}
	if info, ok := readReady(path, 7); !ok || info.Gossip != "127.0.0.1:1" {
		t.Fatalf("%+v %v", info, ok)
	}
}

// TestBuildFailureIsKept: a failed build fails every later Build of the
// package at once, with the compiler's output.
func TestBuildFailureIsKept(t *testing.T) {
	const pkg = "github.com/rsbd/rsbd/internal/testutil/no-such-package"
	_, err := BuildMain(pkg)
	if err == nil || !strings.Contains(err.Error(), "no-such-package") {
		t.Fatalf("BuildMain: %v", err)
	}
	if _, again := BuildMain(pkg); again != err {
		t.Fatalf("second build: %v, want the first's error", again)
	}
}

// TestRsbd builds cmd/rsbd and runs it: its ready file has every field,
// /metrics answers, and SIGTERM ends it with code 0.
func TestRsbd(t *testing.T) {
	if testing.Short() {
		t.Skip("no build of cmd/rsbd with -short")
	}
	bin := Build(t, "github.com/rsbd/rsbd/cmd/rsbd")
	if again := Build(t, "github.com/rsbd/rsbd/cmd/rsbd"); again != bin {
		t.Fatalf("built again: %s, then %s", bin, again)
	}
	sock := filepath.Join(t.TempDir(), "rsbd.sock")
	d := StartDaemon(t, DaemonSpec{Bin: bin}, "--local", "--group-pool", fmt.Sprintf("239.255.%d.0:%d", 20+rand.IntN(200), 20000+rand.IntN(12000)), "--socket-addr", "127.0.0.1:0",
		"--socket-path", sock, "--gossip-addr", "127.0.0.1:0", "--data-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--log-level", "warn")
	info := d.Info()
	if info.Version == "" || info.Socket == "" || info.SocketPath != sock || info.Gossip == "" || info.Data == "" || info.Metrics == "" {
		t.Fatalf("ready file %+v", info)
	}
	if d.Name() != "rsbd" {
		t.Fatalf("name %q, want the executable's", d.Name())
	}
	if peers := d.Metric("rsbd_peers"); peers != 0 {
		t.Fatalf("rsbd_peers %v", peers)
	}
	if code, _, ok := d.Terminate(); !ok || code != 0 {
		t.Fatalf("exit %d (exited %v) after SIGTERM:\n%s", code, ok, d.Logs())
	}
}
