package main

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/introspection"
	"github.com/rsbd/rsbd/introspection/web"
	"github.com/rsbd/rsbd/node"
)

// daemonView is the daemon's part in introspection: a Bus embedded in the
// node that runs RSB introspection for the daemon process (it answers
// surveys and echo calls), answers daemon surveys with the daemon's
// status, and, with --web-addr, serves the introspection page.
type daemonView struct {
	bus     *client.Bus
	srv     *introspection.DaemonServer
	coll    *introspection.Collector
	handler *web.Handler
	http    *http.Server
	ln      net.Listener
	status  *statusSource
}

// startDaemonView starts the daemon's introspection, and the web page on
// webAddr unless it is empty.
func startDaemonView(nd *node.Node, webAddr string, log *slog.Logger) (*daemonView, error) {
	bus, err := client.EmbeddedConfig(nd, client.Config{Logger: log, DisplayName: "rsbd " + nd.Name()})
	if err != nil {
		return nil, err
	}
	v := &daemonView{bus: bus, status: &statusSource{nd: nd, started: time.Now()}}
	if v.srv, err = introspection.ServeDaemon(bus, nd.Name(), v.status.status); err != nil {
		bus.Close()
		return nil, err
	}
	v.registerDrops(nd.Registry())
	if webAddr != "" {
		if err := v.startWeb(webAddr, log); err != nil {
			v.close(context.Background())
			return nil, err
		}
	}
	return v, nil
}

// startWeb serves the introspection page and API on addr.
func (v *daemonView) startWeb(addr string, log *slog.Logger) error {
	var err error
	if v.coll, err = introspection.NewCollector(v.bus, introspection.Config{Logger: log}); err != nil {
		return err
	}
	if v.handler, err = web.New(v.bus, v.coll, web.Config{Logger: log}); err != nil {
		return err
	}
	if v.ln, err = net.Listen("tcp", addr); err != nil {
		return err
	}
	v.http = &http.Server{Handler: v.handler, ReadHeaderTimeout: webReadHeaderTimeout}
	go func() {
		if err := v.http.Serve(v.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("introspection web server failed", "err", err)
		}
	}()
	return nil
}

// registerDrops exports the queries the daemon's introspection dropped, by
// reason: RSB surveys and daemon surveys that found their queue full.
func (v *daemonView) registerDrops(reg prometheus.Registerer) {
	desc := prometheus.NewDesc("rsbd_introspection_drops_total",
		"Introspection queries the daemon dropped for a full queue, by reason.", []string{"reason"}, nil)
	reg.MustRegister(dropsCollector{desc: desc, counts: func() map[string]uint64 {
		return map[string]uint64{"survey_queue": v.bus.Stats().SurveysDropped, "daemon_survey_queue": v.srv.Dropped()}
	}})
}

// dropsCollector is a Prometheus collector of counters read on scrape.
type dropsCollector struct {
	desc   *prometheus.Desc
	counts func() map[string]uint64
}

// Describe sends the collector's one descriptor (prometheus.Collector).
func (c dropsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect sends one counter per reason (prometheus.Collector).
func (c dropsCollector) Collect(ch chan<- prometheus.Metric) {
	for reason, n := range c.counts() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), reason)
	}
}

// webAddr is the address the page is served on, "" without one.
func (v *daemonView) webAddr() string {
	if v == nil || v.ln == nil {
		return ""
	}
	return v.ln.Addr().String()
}

// close stops the page, the daemon survey server and the Bus.
func (v *daemonView) close(ctx context.Context) {
	if v == nil {
		return
	}
	if v.handler != nil {
		v.handler.Close()
	}
	if v.http != nil {
		v.http.Shutdown(ctx)
	}
	if v.coll != nil {
		v.coll.Close()
	}
	if v.srv != nil {
		v.srv.Close()
	}
	v.bus.Close()
}

// statusSource builds the daemon's status from the node and its metrics,
// with rates since the previous status.
type statusSource struct {
	nd      *node.Node
	started time.Time

	mu         sync.Mutex
	last       map[string]introspection.Traffic
	lastScopes map[string]node.ScopeCount
	lastTime   time.Time
}

// status is the DaemonStatus of now.
func (s *statusSource) status() introspection.DaemonStatus {
	host, _ := os.Hostname()
	st := introspection.DaemonStatus{Name: s.nd.Name(), Hostname: host, PID: os.Getpid(), Version: version,
		Started: s.started, Gossip: s.nd.GossipAddr().String(), Peers: []introspection.Peer{}, Listening: []string{},
		Drops: map[string]uint64{}}
	if a := s.nd.DataAddr(); a.IsValid() {
		st.Data = a.String()
	}
	if a := s.nd.SocketAddr(); a != nil {
		st.Socket = a.String()
	}
	for _, m := range s.nd.Members() {
		p := introspection.Peer{Name: m.Name, Gossip: m.GossipAddr.String()}
		if m.DataAddr.IsValid() {
			p.Data = m.DataAddr.String()
		}
		st.Peers = append(st.Peers, p)
	}
	in := s.nd.SocketInterest()
	if in.All {
		st.Listening = append(st.Listening, "/")
	}
	for _, sc := range in.Scopes {
		st.Listening = append(st.Listening, sc.String())
	}
	s.fromMetrics(&st)
	st.Received, st.Sent = groups(s.nd)
	return st
}

// fromMetrics fills traffic, drops, groups and connections from the
// node's Prometheus registry.
func (s *statusSource) fromMetrics(st *introspection.DaemonStatus) {
	fams, err := s.nd.Registry().Gather()
	if err != nil && len(fams) == 0 {
		return
	}
	traffic := map[string]*introspection.Traffic{}
	entry := func(dir, path string) *introspection.Traffic {
		k := dir + " " + path
		if traffic[k] == nil {
			traffic[k] = &introspection.Traffic{Direction: dir, Path: path}
		}
		return traffic[k]
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			s.metric(st, f.GetName(), m, entry)
		}
	}
	s.rates(st, traffic)
}

// metric takes one sample of the families the status shows.
func (s *statusSource) metric(st *introspection.DaemonStatus, name string, m *dto.Metric, entry func(dir, path string) *introspection.Traffic) {
	v := uint64(m.GetCounter().GetValue())
	switch name {
	case "rsbd_received_events_total":
		entry("in", label(m, "path")).Events = v
	case "rsbd_sent_events_total":
		entry("out", label(m, "path")).Events = v
	case "rsbd_received_bytes_total":
		entry("in", label(m, "path")).Bytes = v
	case "rsbd_sent_bytes_total":
		entry("out", label(m, "path")).Bytes = v
	case "rsbd_drops_total":
		if v > 0 {
			st.Drops[label(m, "reason")] = v
		}
	case "rsbd_joined_multicast_groups":
		st.JoinedGroups = int(m.GetGauge().GetValue())
	case "rsbd_socket_connections":
		st.Connections = int(m.GetGauge().GetValue())
	}
}

// rates computes the rates since the previous status (since the start for
// the first) and keeps the totals for the next.
func (s *statusSource) rates(st *introspection.DaemonStatus, traffic map[string]*introspection.Traffic) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	since := s.lastTime
	if since.IsZero() {
		since = s.started
	}
	secs := max(now.Sub(since).Seconds(), 1e-3)
	next := make(map[string]introspection.Traffic, len(traffic))
	for k, t := range traffic {
		prev := s.last[k]
		t.EventRate = float64(t.Events-min(prev.Events, t.Events)) / secs
		t.ByteRate = float64(t.Bytes-min(prev.Bytes, t.Bytes)) / secs
		next[k] = *t
		st.Traffic = append(st.Traffic, *t)
	}
	st.Scopes, s.lastScopes = scopeRates(s.nd.ScopeCounts(), s.lastScopes, secs)
	s.last, s.lastTime = next, now
	sortTraffic(st.Traffic)
}

// label returns the value of a metric's label.
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sortTraffic orders traffic by direction, then path.
func sortTraffic(ts []introspection.Traffic) {
	slices.SortFunc(ts, func(a, b introspection.Traffic) int {
		return cmp.Or(strings.Compare(a.Direction, b.Direction), strings.Compare(a.Path, b.Path))
	})
}
