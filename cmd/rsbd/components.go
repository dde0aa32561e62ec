package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node"
)

// stack is what serve started, closed in the reverse order of its start:
// what depends on the node goes before the node. Each closer logs its own
// errors; close returns the node's.
type stack struct {
	log     *slog.Logger
	closers []func() error
	closed  bool
}

// push adds a closer to run before every one pushed earlier.
func (s *stack) push(f func() error) { s.closers = append(s.closers, f) }

// pushTimed adds the close of a listener that waits for the requests in
// progress, bounded by timeout; its errors are logged as what's.
func (s *stack) pushTimed(what string, timeout time.Duration, closeFn func(context.Context) error) {
	s.push(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := closeFn(ctx); err != nil {
			s.log.Warn(what+" closed with errors", "err", err)
		}
		return nil
	})
}

// close runs the closers, the last pushed first, once.
func (s *stack) close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, f := range slices.Backward(s.closers) {
		errs = append(errs, f())
	}
	return errors.Join(errs...)
}

// daemon is what serve runs: the node and the listeners and bridges around
// it, with the readiness /readyz reports.
type daemon struct {
	nd       *node.Node
	ms       *metrics.Server
	gw       *gateway
	mm       *meshListener
	view     *daemonView
	br       *bridges
	stopping atomic.Bool
}

// start starts the daemon's parts in order, each pushed on st; on an error
// the caller closes st.
func (d *daemon) start(s settings, log *slog.Logger, st *stack) error {
	reg := metrics.NewRegistry()
	// The metrics server is closed last, so that /readyz answers during the
	// shutdown; it starts last, once readiness can be asked of every part.
	st.pushTimed("metrics server", metricsCloseTimeout, func(ctx context.Context) error {
		if d.ms == nil {
			return nil
		}
		return d.ms.Close(ctx)
	})
	nd, err := node.New(s.node, reg)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	d.nd = nd
	st.push(nd.Close)
	stopKeys := watchKeys(nd, s.keyFile, log)
	st.push(func() error { stopKeys(); return nil })
	if s.gatewayAddr != "" {
		if d.gw, err = startGateway(nd, s.gatewayAddr, s.gatewaySec, s.gatewayHooks, s.gatewayAgents, log, reg); err != nil {
			return fmt.Errorf("cannot serve the gateway on %s: %w", s.gatewayAddr, err)
		}
		st.pushTimed("gateway", gatewayCloseTimeout, d.gw.close)
		reg.MustRegister(gatewayUp(d.gw))
	}
	if s.meshAddr != "" {
		if d.mm, err = startMeshListener(nd, s.meshAddr, s.gatewaySec, log, reg); err != nil {
			return fmt.Errorf("cannot serve the meshmessage listener on %s: %w", s.meshAddr, err)
		}
		st.pushTimed("meshmessage listener", gatewayCloseTimeout, d.mm.close)
	}
	if d.view, err = startDaemonView(nd, s.webAddr, log); err != nil {
		return fmt.Errorf("cannot start the daemon's introspection (web %q): %w", s.webAddr, err)
	}
	st.pushTimed("introspection", webCloseTimeout, func(ctx context.Context) error { d.view.close(ctx); return nil })
	if d.br, err = startBridges(nd, s.bridges, log, reg); err != nil {
		return fmt.Errorf("cannot start the bridges: %w", err)
	}
	st.push(d.br.close)
	if s.metricsAddr != "" {
		ms := metrics.NewServer(metrics.NewHandler(reg, d.ready), log)
		reg.MustRegister(ms.Collector())
		if err := ms.Start(s.metricsAddr); err != nil {
			return fmt.Errorf("cannot serve metrics on %s: %w", s.metricsAddr, err)
		}
		d.ms = ms
	}
	return nil
}

// ready is /readyz's answer: every listener and bridge up and the node
// ready, until the shutdown begins.
func (d *daemon) ready() error {
	if d.stopping.Load() {
		return errShuttingDown
	}
	if err := errors.Join(d.gw.ready(), d.mm.ready()); err != nil {
		return err
	}
	if err := d.br.ready(); err != nil {
		return err
	}
	return d.nd.Ready()
}

// info is the ready file's content: the addresses the daemon bound.
func (d *daemon) info() readyInfo {
	info := readyInfoOf(d.nd, d.ms, d.gw)
	if d.mm != nil {
		info.MeshMessage = d.mm.Addr().String()
	}
	info.Web = d.view.webAddr()
	return info
}
