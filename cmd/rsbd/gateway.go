package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh/cloudevents"
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
	// failed holds the error that ended the HTTP server, if one did.
	failed atomic.Pointer[error]
}

// startGateway serves the CloudEvents gateway on addr.
func startGateway(nd *node.Node, addr string, log *slog.Logger) (*gateway, error) {
	bus, err := client.EmbeddedConfig(nd, client.Config{Logger: log})
	if err != nil {
		return nil, err
	}
	gw, err := cloudevents.New(bus, cloudevents.Config{Logger: log})
	if err != nil {
		_ = bus.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_ = gw.Close()
		_ = bus.Close()
		return nil, fmt.Errorf("gateway listener: %w", err)
	}
	g := &gateway{bus: bus, gw: gw, ln: ln,
		srv: &http.Server{Handler: gw, ReadHeaderTimeout: gatewayHeaderTimeout, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}}
	go func() {
		if err := g.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
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
	err := g.gw.Close()
	err = errors.Join(err, g.srv.Shutdown(ctx))
	return errors.Join(err, g.bus.Close())
}
