package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/rsbd/rsbd/config"
	"github.com/rsbd/rsbd/internal/gcfloor"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node"
)

// process is what run needs from the process; tests supply their own.
type process struct {
	args    []string
	environ []string // "NAME=value"; the RSB_* entries configure rsbd
	stdout  io.Writer
	stderr  io.Writer
	signals <-chan os.Signal // SIGINT and SIGTERM
	// load is the base of the configuration loading options (tests point
	// the file list and directories somewhere harmless); Env, Defaults,
	// Debug and Logger are filled in by run.
	load config.LoadOptions
}

// errShuttingDown is /readyz's answer once a signal has arrived.
var errShuttingDown = errors.New("shutting down")

// run is the whole daemon: flags, configuration, logging, serving until a
// signal, shutdown. It returns the exit code.
func run(p process) int {
	fs, cl, err := parseFlags(p.args, p.stderr)
	switch {
	case errors.Is(err, errHelp):
		return exitOK
	case err != nil:
		fmt.Fprintf(p.stderr, "rsbd: %v\n", err)
		return exitUsage
	case cl.version:
		fmt.Fprintf(p.stdout, "rsbd %s (%s)\n", version, runtime.Version())
		return exitOK
	}
	lo := p.load
	lo.Env, lo.Debug, lo.Logger = p.environ, p.stderr, slog.New(slog.DiscardHandler)
	c, err := loadConfig(fs, lo)
	if err != nil {
		fmt.Fprintf(p.stderr, "rsbd: %v\n", err)
		return exitUsage
	}
	s, err := parseSettings(c)
	if cl.printConfig {
		return printConfig(p.stdout, c, err)
	}
	if err != nil {
		fmt.Fprintf(p.stderr, "rsbd: invalid configuration:\n%v\n", err)
		return exitUsage
	}
	log := newLogger(p.stderr, s.logFormat, s.logLevel)
	for _, w := range c.Warnings() {
		log.Warn("configuration problem ignored", "problem", w)
	}
	for _, k := range unknownKeys(c) {
		v, _ := c.Get(k)
		log.Warn("unknown configuration key ignored", "key", k, "origin", v.Origin.String())
	}
	s.node.Logger = log
	return serve(s, log, p.signals)
}

// printConfig writes the effective configuration for --print-config; a
// configuration that does not parse is shown too, followed by its errors.
func printConfig(w io.Writer, c *config.Config, parseErr error) int {
	fmt.Fprintln(w, "# rsbd effective configuration: key = value  # origin (overridden origins)")
	if err := c.Dump(w); err != nil {
		return exitFailure
	}
	for _, warn := range c.Warnings() {
		fmt.Fprintf(w, "# warning: %s\n", warn)
	}
	for _, k := range unknownKeys(c) {
		fmt.Fprintf(w, "# warning: unknown key %s is ignored\n", k)
	}
	if parseErr != nil {
		fmt.Fprintf(w, "# error: %v\n", parseErr)
		return exitUsage
	}
	return exitOK
}

// serve runs the node and the HTTP endpoints until a signal, then shuts
// down. It returns the exit code.
func serve(s settings, log *slog.Logger, signals <-chan os.Signal) int {
	if s.cpuLatency >= 0 {
		hold, err := holdCPULatency(s.cpuLatency)
		if err != nil {
			log.Error("cannot hold the CPU latency request", "us", s.cpuLatency, "err", err)
			return exitFailure
		}
		defer hold.Close()
		log.Info("holding a CPU wake-up latency request", "us", s.cpuLatency, "device", cpuLatencyDevice)
	}
	if stop := startGCFloor(s.gcFloorMiB, log); stop != nil {
		defer stop()
	}
	st := &stack{log: log}
	var d daemon
	if err := d.start(s, log, st); err != nil {
		log.Error("cannot start the daemon", "err", err)
		_ = st.close()
		return exitFailure
	}
	info := d.info()
	if s.readyFile != "" {
		if err := writeReadyFile(s.readyFile, info); err != nil {
			log.Error("cannot write ready file", "path", s.readyFile, "err", err)
			_ = st.close()
			return exitFailure
		}
		defer os.Remove(s.readyFile)
	}
	log.Info("rsbd serving", "version", version, "socket", info.Socket, "socket_path", info.SocketPath, "gossip", info.Gossip,
		"data", info.Data, "metrics", info.Metrics, "gateway", info.Gateway, "web", info.Web, "multicast", !s.node.Unicast, "peers", len(d.nd.Members()))
	sig := <-signals
	log.Info("shutting down", "signal", sig.String())
	d.stopping.Store(true)
	return shutdown(log, st.close, signals, shutdownTimeout)
}

// startGCFloor puts the heap floor of --gc-floor in force, unless it is
// off or the environment sets the collector's policy (GOGC, GOMEMLIMIT),
// which then wins. It returns the function that ends it, or nil.
func startGCFloor(floorMiB int, log *slog.Logger) func() {
	if floorMiB == 0 {
		return nil
	}
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		if _, ok := os.LookupEnv(env); ok {
			log.Info("heap floor off: the environment sets the collector's policy", "env", env)
			return nil
		}
	}
	cfg := gcfloor.Config{FloorMiB: floorMiB}
	stop, err := gcfloor.Start(cfg)
	if err != nil { // another daemon in this process (tests) holds it
		log.Warn("heap floor not set", "err", err)
		return nil
	}
	if floor, capped, _ := gcfloor.InForce(); capped {
		log.Info("heap floor lowered to a quarter of the cgroup's memory limit", "floor_mib", floor>>20, "asked_mib", floorMiB)
	}
	return stop
}

// shutdown runs closeFn, bounded by timeout; a second signal ends the wait
// at once. It returns exitOK when closeFn finished (its errors are logged:
// the daemon has stopped either way), exitFailure otherwise.
func shutdown(log *slog.Logger, closeFn func() error, signals <-chan os.Signal, timeout time.Duration) int {
	done := make(chan error, 1)
	go func() { done <- closeFn() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		if err != nil {
			log.Warn("shutdown finished with errors", "err", err)
		}
		log.Info("stopped")
		return exitOK
	case sig := <-signals:
		log.Error("second signal: exiting before the shutdown finished", "signal", sig.String())
		return exitFailure
	case <-t.C:
		log.Error("shutdown timed out", "after", timeout.String())
		return exitFailure
	}
}

// readyInfo is the content of the ready file: the addresses the daemon
// bound, for scripts and tests that start it on port 0.
type readyInfo struct {
	PID     int    `json:"pid"`
	Version string `json:"version"`
	Socket  string `json:"socket,omitempty"`
	// SocketPath is the Unix socket serving local clients, if any.
	SocketPath string `json:"socket_path,omitempty"`
	Gossip     string `json:"gossip"`
	Data       string `json:"data"`
	Metrics    string `json:"metrics,omitempty"`
	// Gateway is the CloudEvents gateway's HTTP address, if it serves.
	Gateway string `json:"gateway,omitempty"`
	// MeshMessage is the meshmessage listener's TCP address, if it serves.
	MeshMessage string `json:"meshmessage,omitempty"`
	// Web is the introspection page's HTTP address, if it serves.
	Web string `json:"web,omitempty"`
}

func readyInfoOf(nd *node.Node, ms *metrics.Server, gw *gateway) readyInfo {
	info := readyInfo{PID: os.Getpid(), Version: version, Gossip: nd.GossipAddr().String(), Data: nd.DataAddr().String()}
	if a := nd.SocketAddr(); a != nil {
		info.Socket = a.String()
	}
	info.SocketPath = nd.SocketPath()
	if ms != nil {
		info.Metrics = ms.Addr().String()
	}
	if gw != nil {
		info.Gateway = gw.Addr().String()
	}
	return info
}

// writeReadyFile writes info to path atomically (a temporary file renamed
// into place), so a reader never sees a partial file.
func writeReadyFile(path string, info readyInfo) error {
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".rsbd-ready-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}
