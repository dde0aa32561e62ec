package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/config"
	"github.com/rsbd/rsbd/internal/syncbuf"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// runArgs runs the daemon in-process with args and env and no
// configuration files; signals feeds it.
func runArgs(t *testing.T, signals chan os.Signal, env []string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr syncbuf.Buffer
	code := run(process{args: args, environ: env, stdout: &stdout, stderr: &stderr, signals: signals,
		load: config.LoadOptions{Files: []string{}}})
	return code, stdout.String(), stderr.String()
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		args []string
		code int
		out  string // expected in stdout+stderr
	}{
		{"version", nil, []string{"--version"}, exitOK, "rsbd " + version},
		{"help", nil, []string{"--help"}, exitOK, "--socket-addr HOST:PORT"},
		{"unknown flag", nil, []string{"--no-such-flag"}, exitUsage, "no-such-flag"},
		{"argument", nil, []string{"serve"}, exitUsage, `unexpected argument "serve"`},
		{"bad value", []string{"RSB_RSBD_MULTICAST=maybe"}, nil, exitUsage, "env RSB_RSBD_MULTICAST"},
		{"print", []string{"RSB_QUALITYOFSERVICE_ORDERING=ORDERED"}, []string{"--print-config", "--join", "10.0.0.1:7946"},
			exitOK, "rsbd.join = 10.0.0.1:7946  # flag --join"},
		{"print bad", nil, []string{"--print-config", "--gossip-addr", "nowhere"}, exitUsage, "# error: config: rsbd.gossip.addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(t, nil, tt.env, tt.args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.out) {
				t.Fatalf("exit %d, want %d; output lacks %q:\n%s%s", code, tt.code, tt.out, stdout, stderr)
			}
		})
	}
}

func TestPrintConfigShowsOrigins(t *testing.T) {
	env := []string{"RSB_QUALITYOFSERVICE_ORDERING=ORDERED", "RSB_RSBD_SOCKET_ADDR=:1234"}
	code, out, _ := runArgs(t, nil, env, "--print-config", "--socket-addr", ":4321")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, line := range []string{
		"qualityofservice.ordering = ORDERED  # env RSB_QUALITYOFSERVICE_ORDERING (overrides default)",
		"rsbd.socket.addr = :4321  # flag --socket-addr (overrides env RSB_RSBD_SOCKET_ADDR, default)",
		"rsbd.metrics.addr = 127.0.0.1:9555  # default",
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
}

func TestServeUntilSignal(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready.json")
	sock := filepath.Join(t.TempDir(), "rsbd.sock")
	// Where this test may write the PM QoS device, the daemon holds a
	// request of 11 µs while it runs.
	latArgs, latBefore := []string{}, -1
	if h, err := holdCPULatency(0); err == nil {
		h.Close()
		if latBefore = currentCPULatency(t); latBefore > 11 {
			latArgs = []string{"--cpu-latency", "11"}
		}
	}
	d := startServing(t, ready, append([]string{"--local", "--socket-path", sock}, latArgs...)...)
	info, signals, done, stderr := d.info, d.signals, d.done, d.stderr
	if info.Socket == "" || info.Metrics == "" || info.PID != os.Getpid() || info.SocketPath != sock {
		t.Fatalf("ready file %+v", info)
	}
	if len(latArgs) > 0 {
		if got := currentCPULatency(t); got != 11 {
			t.Errorf("CPU latency request in force while serving: %d µs, want 11", got)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := sockclient.Dial(ctx, sockclient.UnixPrefix+sock)
	if err != nil {
		t.Fatalf("dialling the Unix socket: %v", err)
	}
	_ = c.Close()
	resp, err := http.Get("http://" + info.Metrics + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz answered %d", resp.StatusCode)
	}
	signals <- syscall.SIGTERM
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d after SIGTERM:\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	if _, err := os.Stat(ready); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ready file left behind: %v", err)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file left behind: %v", err)
	}
	if len(latArgs) > 0 {
		if got := currentCPULatency(t); got != latBefore {
			t.Errorf("CPU latency request after exit: %d µs, want %d again", got, latBefore)
		}
	}
	for _, msg := range []string{`"msg":"rsbd serving"`, `"msg":"shutting down","signal":"terminated"`, `"msg":"stopped"`} {
		if !strings.Contains(stderr.String(), msg) {
			t.Errorf("log lacks %s:\n%s", msg, stderr.String())
		}
	}
}

// serving is a daemon run by startServing.
type serving struct {
	info    readyInfo
	signals chan os.Signal
	done    chan int // its exit code
	stderr  *syncbuf.Buffer
}

// startServing runs the daemon on loopback with kernel-chosen ports, a
// random group pool, JSON logs and the ready file ready, plus args, and
// waits until it is ready.
func startServing(t *testing.T, ready string, args ...string) serving {
	t.Helper()
	return startServingEnv(t, ready, nil, args...)
}

// startServingEnv is startServing with the RSB_* environment env.
func startServingEnv(t *testing.T, ready string, env []string, args ...string) serving {
	t.Helper()
	pool := fmt.Sprintf("239.255.%d.0:%d", 20+rand.IntN(200), 20000+rand.IntN(10000))
	d := serving{signals: make(chan os.Signal, 2), done: make(chan int, 1), stderr: &syncbuf.Buffer{}}
	go func() {
		d.done <- run(process{
			args: append([]string{"--socket-addr", "127.0.0.1:0", "--gossip-addr", "127.0.0.1:0", "--data-addr", "127.0.0.1:0",
				"--metrics-addr", "127.0.0.1:0", "--group-pool", pool, "--ready-file", ready, "--log-format", "json"}, args...),
			stdout: io.Discard, stderr: d.stderr, signals: d.signals, load: config.LoadOptions{Files: []string{}}, environ: env,
		})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(ready)
		if err == nil && json.Unmarshal(b, &d.info) == nil {
			return d
		}
		select {
		case code := <-d.done:
			t.Fatalf("daemon exited with %d before it was ready:\n%s", code, d.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ready file:\n%s", d.stderr.String())
		}
	}
}

// A --join member that accepts and never answers neither delays the
// daemon's start nor its exit on SIGTERM (the LAN profile's join timeout
// is 10 s).
func TestServeWithUnansweringSeed(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	began := time.Now()
	d := startServing(t, filepath.Join(t.TempDir(), "ready.json"), "--join", ln.Addr().String())
	held, err := ln.Accept() // the join's connection, never answered
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("ready after %v with an unanswering seed", took)
	}
	stopping := time.Now()
	d.signals <- syscall.SIGTERM
	select {
	case code := <-d.done:
		if code != exitOK {
			t.Fatalf("exit %d after SIGTERM:\n%s", code, d.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	if took := time.Since(stopping); took > 5*time.Second {
		t.Fatalf("exit took %v after SIGTERM during a join", took)
	}
}

func TestStartFailureExitsOne(t *testing.T) {
	busy, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	code, _, stderr := runArgs(t, nil, nil, "--socket-addr", busy.Addr().String(), "--gossip-addr", "127.0.0.1:0",
		"--data-addr", "127.0.0.1:0", "--metrics-addr", "off", "--log-format", "text")
	if code != exitFailure || !strings.Contains(stderr, "cannot start") {
		t.Fatalf("exit %d, want %d with a logged reason:\n%s", code, exitFailure, stderr)
	}
}

func TestShutdown(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	t.Run("finishes", func(t *testing.T) {
		code := shutdown(log, func() error { return errors.New("leave timed out") }, nil, time.Minute)
		if code != exitOK {
			t.Fatalf("exit %d, want %d", code, exitOK)
		}
	})
	t.Run("second signal", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		signals := make(chan os.Signal, 1)
		signals <- syscall.SIGINT
		code := shutdown(log, func() error { <-release; return nil }, signals, time.Minute)
		if code != exitFailure {
			t.Fatalf("exit %d, want %d", code, exitFailure)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		code := shutdown(log, func() error { <-release; return nil }, nil, time.Millisecond)
		if code != exitFailure {
			t.Fatalf("exit %d, want %d", code, exitFailure)
		}
	})
}

func TestLoggerFormat(t *testing.T) {
	var b bytes.Buffer
	newLogger(&b, logAuto, slog.LevelInfo).Info("hello", "k", 1)
	newLogger(&b, logText, slog.LevelInfo).Info("hello", "k", 2)
	newLogger(&b, logJSON, slog.LevelWarn).Info("hidden")
	want := `"msg":"hello","k":1}` + "\n"
	if lines := strings.SplitAfter(b.String(), "\n"); len(lines) != 3 || !strings.HasSuffix(lines[0], want) ||
		!strings.HasSuffix(lines[1], "msg=hello k=2\n") {
		t.Fatalf("log output:\n%s", b.String())
	}
}
