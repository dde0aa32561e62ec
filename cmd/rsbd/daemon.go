package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
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
	reg := metrics.NewRegistry()
	nd, err := node.New(s.node, reg)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailure
	}
	var gw *gateway
	if s.gatewayAddr != "" {
		if gw, err = startGateway(nd, s.gatewayAddr, s.gatewaySec, s.gatewayHooks, log, reg); err != nil {
			log.Error("cannot serve the gateway", "addr", s.gatewayAddr, "err", err)
			nd.Close()
			return exitFailure
		}
	}
	br, err := startBridges(nd, s.bridges, log, reg)
	if err != nil {
		log.Error("cannot start the bridges", "err", err)
		closeAll(nd, nil, gw, log)
		return exitFailure
	}
	defer br.close() // on the paths that end before the shutdown, which closes them first
	var stopping atomic.Bool
	ready := func() error {
		if stopping.Load() {
			return errShuttingDown
		}
		if err := gw.ready(); err != nil {
			return err
		}
		if err := br.ready(); err != nil {
			return err
		}
		return nd.Ready()
	}
	var ms *metrics.Server
	if s.metricsAddr != "" {
		ms = metrics.NewServer(metrics.NewHandler(reg, ready), log)
		if err := ms.Start(s.metricsAddr); err != nil {
			log.Error("cannot serve metrics", "addr", s.metricsAddr, "err", err)
			_ = br.close()
			closeAll(nd, nil, gw, log)
			return exitFailure
		}
	}
	info := readyInfoOf(nd, ms, gw)
	if s.readyFile != "" {
		if err := writeReadyFile(s.readyFile, info); err != nil {
			log.Error("cannot write ready file", "path", s.readyFile, "err", err)
			_ = br.close()
			closeAll(nd, ms, gw, log)
			return exitFailure
		}
		defer os.Remove(s.readyFile)
	}
	log.Info("rsbd serving", "version", version, "socket", info.Socket, "socket_path", info.SocketPath, "gossip", info.Gossip,
		"data", info.Data, "metrics", info.Metrics, "gateway", info.Gateway, "multicast", !s.node.Unicast, "peers", len(nd.Members()))
	sig := <-signals
	log.Info("shutting down", "signal", sig.String())
	stopping.Store(true)
	return shutdown(log, func() error { return errors.Join(br.close(), closeAll(nd, ms, gw, log)) }, signals, shutdownTimeout)
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

// closeAll closes the gateway (nil: none), the node (socket clients,
// reliable flush, leaving the cluster), then the HTTP endpoints, so /readyz
// answers 503 meanwhile.
func closeAll(nd *node.Node, ms *metrics.Server, gw *gateway, log *slog.Logger) error {
	if gw != nil {
		ctx, cancel := context.WithTimeout(context.Background(), gatewayCloseTimeout)
		if err := gw.close(ctx); err != nil {
			log.Warn("gateway closed with errors", "err", err)
		}
		cancel()
	}
	err := nd.Close()
	if ms != nil {
		ctx, cancel := context.WithTimeout(context.Background(), metricsCloseTimeout)
		defer cancel()
		if cerr := ms.Close(ctx); cerr != nil {
			log.Warn("metrics server closed with errors", "err", cerr)
		}
	}
	return err
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
