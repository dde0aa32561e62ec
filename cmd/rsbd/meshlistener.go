package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh/meshmessage"
	"github.com/rsbd/rsbd/node"
)

// keyGatewayMeshMessage is the key of --gateway-meshmessage.
const keyGatewayMeshMessage = "rsbd.gateway.meshmessage"

// meshListener is the EventMesh TCP listener of --gateway-meshmessage: a
// meshmessage.Server on a Bus embedded in the node, with the gateway's
// TLS and tokens.
type meshListener struct {
	bus *client.Bus
	srv *meshmessage.Server
	ln  net.Listener
	// stopHUP ends the reloading of the TLS certificate and tokens on
	// SIGHUP.
	stopHUP func()
	// served closes when Serve returns; failed holds its error if the
	// listener failed rather than closed.
	served chan struct{}
	failed atomic.Pointer[error]
}

// startMeshListener serves the meshmessage listener on addr with the TLS
// and tokens of sec and registers its metrics with reg.
func startMeshListener(nd *node.Node, addr string, sec gatewaySecurity, log *slog.Logger, reg prometheus.Registerer) (*meshListener, error) {
	log = log.With("listener", meshmessage.Protocol)
	bus, err := client.EmbeddedConfig(nd, client.Config{Logger: log})
	if err != nil {
		return nil, err
	}
	srv, err := meshmessage.New(bus, meshmessage.Config{Logger: log})
	if err != nil {
		_ = bus.Close()
		return nil, err
	}
	secrets, err := loadSecrets(sec, srv, log)
	var tc *tls.Config
	if err == nil {
		tc, err = secrets.tlsConfig()
	}
	var ln net.Listener
	if err == nil {
		ln, err = net.Listen("tcp", addr)
	}
	if err == nil {
		if err = reg.Register(meshCollector(srv.Counters())); err != nil {
			_ = ln.Close()
		}
	}
	if err != nil {
		_ = srv.Close()
		_ = bus.Close()
		return nil, fmt.Errorf("meshmessage listener: %w", err)
	}
	m := &meshListener{bus: bus, srv: srv, ln: ln, stopHUP: secrets.watchHUP(), served: make(chan struct{})}
	served := ln
	if tc != nil {
		served = tls.NewListener(ln, tc)
	}
	go func() {
		defer close(m.served)
		if err := srv.Serve(served); !errors.Is(err, meshmessage.ErrClosed) {
			log.Error("meshmessage listener stopped serving", "err", err)
			m.failed.Store(&err)
		}
	}()
	log.Info("meshmessage listener serving", "addr", ln.Addr().String(), "tls", tc != nil)
	return m, nil
}

// ready reports why the listener does not serve (/readyz); nil for a
// listener serving, or none configured.
func (m *meshListener) ready() error {
	if m == nil {
		return nil
	}
	if err := m.failed.Load(); err != nil {
		return fmt.Errorf("meshmessage listener: %w", *err)
	}
	return nil
}

// Addr returns the address the listener listens on.
func (m *meshListener) Addr() net.Addr { return m.ln.Addr() }

// close says SERVER_GOODBYE to every client, closes the server and its
// Bus; ctx bounds the wait for the accepting goroutine. A nil listener
// closes nothing.
func (m *meshListener) close(ctx context.Context) error {
	if m == nil {
		return nil
	}
	m.stopHUP()
	err := m.srv.Close()
	select {
	case <-m.served:
	case <-ctx.Done():
		err = errors.Join(err, ctx.Err())
	}
	return errors.Join(err, m.bus.Close())
}
