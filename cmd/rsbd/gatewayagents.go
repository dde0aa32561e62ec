package main

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh/a2a"
	"github.com/rsbd/rsbd/mesh/cloudevents"
	"github.com/rsbd/rsbd/mesh/streamcall"
	"github.com/rsbd/rsbd/scope"
)

// keyGatewayA2A is the key of --gateway-a2a.
const keyGatewayA2A = "rsbd.gateway.a2a"

// gatewayAgents says whether the gateway serves agents: A2A JSON-RPC
// under /.a2a/ (with the agent cards) and streamed calls under /.stream/.
type gatewayAgents struct {
	on bool
	// defaultAgent is the scope of the agent a request to /.a2a itself
	// goes to; empty: none.
	defaultAgent string
}

// gatewayAgents reads --gateway-a2a: off, on, or the default agent's
// scope (which turns it on).
func (r *reader) gatewayAgents() gatewayAgents {
	v := strings.TrimSpace(r.c.String(keyGatewayA2A, valueOff))
	switch strings.ToLower(v) {
	case "", valueOff, "false":
		return gatewayAgents{}
	case "on", "true":
		return gatewayAgents{on: true}
	}
	sc, err := scope.Parse(v)
	if err != nil {
		r.fail(keyGatewayA2A, "off, on or the default agent's scope", err)
		return gatewayAgents{}
	}
	return gatewayAgents{on: true, defaultAgent: sc.String()}
}

// agentMount is the A2A handler and the streamed-call handler beside the
// CloudEvents gateway on its HTTP server.
type agentMount struct {
	a2a    *a2a.Handler
	stream *streamcall.HTTPHandler
	gw     *cloudevents.Gateway
}

// mountAgents returns the gateway's HTTP handler: gw, and with cfg on the
// A2A and streamed-call handlers on their paths, checking gw's tokens,
// their counters registered with reg. The returned close function closes
// what it made (nil: nothing).
func mountAgents(bus *client.Bus, gw *cloudevents.Gateway, cfg gatewayAgents, log *slog.Logger, reg prometheus.Registerer) (http.Handler, func() error, error) {
	if !cfg.on {
		return gw, func() error { return nil }, nil
	}
	ah, err := a2a.New(bus, a2a.Config{DefaultAgent: cfg.defaultAgent, Tokens: gw.Tokens, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	m := &agentMount{a2a: ah, gw: gw,
		stream: streamcall.NewHTTPHandler(bus, streamcall.HTTPConfig{Tokens: gw.Tokens, Logger: log})}
	for _, c := range []prometheus.Collector{meshCollector(ah.Counters()), meshCollector(m.stream.Counters())} {
		if err := reg.Register(c); err != nil {
			_ = m.close()
			return nil, nil, err
		}
	}
	log.Info("gateway serves agents", "a2a", a2a.Prefix+"/", "stream", streamcall.HTTPPrefix+"/", "default_agent", cfg.defaultAgent)
	return m, m.close, nil
}

// ServeHTTP sends a request to the handler of its path.
func (m *agentMount) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == a2a.Prefix || strings.HasPrefix(p, a2a.Prefix+"/") || p == a2a.CardPath || p == a2a.LegacyCardPath:
		m.a2a.ServeHTTP(w, r)
	case strings.HasPrefix(p, streamcall.HTTPPrefix+"/"):
		m.stream.ServeHTTP(w, r)
	default:
		m.gw.ServeHTTP(w, r)
	}
}

// close ends the streams being served and closes the handlers.
func (m *agentMount) close() error {
	return errors.Join(m.a2a.Close(), m.stream.Close())
}
