package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh/cloudevents"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/node"
)

// gateway is the CloudEvents gateway of --gateway-http: an HTTP server
// whose handler publishes and subscribes through a Bus embedded in the
// node, as any participant of the bus.
type gateway struct {
	bus *client.Bus
	gw  *cloudevents.Gateway
	srv *http.Server
	ln  net.Listener
	// stopHUP ends the reloading of the TLS certificate and tokens on
	// SIGHUP.
	stopHUP func()
	// failed holds the error that ended the HTTP server, if one did.
	failed atomic.Pointer[error]
	// closeAgents closes the A2A and streamed-call handlers
	// (gatewayagents.go).
	closeAgents func() error
}

// startGateway serves the CloudEvents gateway on addr, with the TLS and
// tokens of sec and the webhooks of hooks, and registers its metrics with
// reg.
func startGateway(nd *node.Node, addr string, sec gatewaySecurity, hooks []namedWebhook, agents gatewayAgents, log *slog.Logger, reg prometheus.Registerer) (*gateway, error) {
	bus, err := client.EmbeddedConfig(nd, client.Config{Logger: log})
	if err != nil {
		return nil, err
	}
	gw, err := cloudevents.New(bus, cloudevents.Config{Logger: log, OriginPatterns: sec.origins})
	if err != nil {
		_ = bus.Close()
		return nil, err
	}
	secrets, err := loadSecrets(sec, gw, log)
	for _, h := range hooks {
		if err != nil {
			break
		}
		// A webhook ends with the gateway's Close, so it is not kept.
		if _, err = gw.AddWebhook(h.cfg); err != nil {
			err = fmt.Errorf("webhook %s: %w", h.name, err)
		} else {
			log.Info("gateway webhook started", "name", h.name, "scope", h.cfg.Scope, "url", h.cfg.URL, "validate", !h.cfg.SkipValidation)
		}
	}
	var tc *tls.Config
	if err == nil {
		tc, err = secrets.tlsConfig()
	}
	var ln net.Listener
	if err == nil {
		ln, err = net.Listen("tcp", addr)
	}
	if err == nil {
		if err = reg.Register(gatewayCollector(gw)); err != nil {
			ln.Close()
		}
	}
	var handler http.Handler
	var closeAgents func() error
	if err == nil {
		if handler, closeAgents, err = mountAgents(bus, gw, agents, log, reg); err != nil {
			ln.Close()
		}
	}
	if err != nil {
		_ = gw.Close()
		_ = bus.Close()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g := &gateway{bus: bus, gw: gw, ln: ln, stopHUP: secrets.watchHUP(), closeAgents: closeAgents,
		srv: &http.Server{Handler: handler, ReadHeaderTimeout: gatewayHeaderTimeout, TLSConfig: tc, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}}
	go func() {
		serve := g.srv.Serve
		if tc != nil {
			serve = func(ln net.Listener) error { return g.srv.ServeTLS(ln, "", "") }
		}
		if err := serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("gateway stopped serving", "err", err)
			g.failed.Store(&err)
		}
	}()
	return g, nil
}

// ready reports why the gateway does not serve (/readyz); nil for a
// gateway serving, or none configured.
func (g *gateway) ready() error {
	if g == nil {
		return nil
	}
	if err := g.failed.Load(); err != nil {
		return fmt.Errorf("gateway: %w", *err)
	}
	return nil
}

// Addr returns the address the gateway listens on.
func (g *gateway) Addr() net.Addr { return g.ln.Addr() }

// close ends the subscriptions, stops the HTTP server (waiting for
// requests in progress until ctx ends) and closes the gateway's Bus.
func (g *gateway) close(ctx context.Context) error {
	g.stopHUP()
	err := errors.Join(g.closeAgents(), g.gw.Close())
	err = errors.Join(err, g.srv.Shutdown(ctx))
	return errors.Join(err, g.bus.Close())
}

// gatewayCollector exports the CloudEvents gateway's counters: the shared
// rsbd_gateway_* families (meshCollector) and its webhooks ended, each
// labelled protocol="cloudevents".
func gatewayCollector(gw *cloudevents.Gateway) prometheus.Collector {
	type st = cloudevents.Stats
	var ms []metrics.SnapshotMetric[st]
	for _, reason := range cloudevents.WebhookEndReasons() {
		ms = append(ms, metrics.SnapshotMetric[st]{Name: "rsbd_gateway_webhooks_ended_total",
			Help: "Webhooks their target ended (410, or a refused or unanswered validation handshake), by reason.", Type: prometheus.CounterValue,
			Labels: prometheus.Labels{"protocol": cloudevents.Protocol, "reason": reason}, Value: func(s st) float64 { return float64(s.WebhooksEnded[reason]) }})
	}
	return collectors{meshCollector(gw.Counters()), metrics.NewSnapshotCollector(gw.Stats, ms...)}
}

// collectors is one collector made of several.
type collectors []prometheus.Collector

// Describe implements prometheus.Collector.
func (cs collectors) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range cs {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (cs collectors) Collect(ch chan<- prometheus.Metric) {
	for _, c := range cs {
		c.Collect(ch)
	}
}
