package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/rsbd/rsbd/bench/internal/agent"
	"github.com/rsbd/rsbd/bench/internal/bus"
	"github.com/rsbd/rsbd/bench/internal/workload"
	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// agentState is what one agent process holds between operations: at most
// one endpoint it publishes and subscribes through, and the servers it runs.
type agentState struct {
	mu    sync.Mutex
	ep    bus.Endpoint
	emb   *bus.Embedded
	nats  *server.Server
	echo  *bus.UDPEcho
	refs  []io.Closer // the raw references' echoes and relay
	start chan struct{}
	abort context.CancelFunc
	acker *workload.Acker
	pongs map[string]func()
	// recording holds the file of each recording under way, by kind
	// (recorders).
	recording map[string]*os.File
	// sockAddr is the daemon the socket endpoint dialled.
	sockAddr string
}

// Argument and result types of the agent operations.
type (
	addrArgs struct {
		Addr  string `json:"addr"`
		Conns int    `json:"conns,omitempty"`
		// Group is a multicast group: where the multicast echo replies
		// to, or where the multicast pinger listens.
		Group string `json:"group,omitempty"`
	}
	addrResult struct {
		Addr   string `json:"addr"`
		Socket string `json:"socket,omitempty"`
		Unix   string `json:"unix,omitempty"` // "unix:PATH" of the socket server
	}
	pongArgs struct {
		In  string `json:"in"`
		Out string `json:"out"`
	}
	subsArgs struct {
		N      int    `json:"n"`
		Prefix string `json:"prefix"`
	}
	subsResult struct {
		N           int           `json:"n"`
		BytesPerSub float64       `json:"bytes_per_sub"`
		Subscribe   time.Duration `json:"subscribe"` // creating the N subscriptions
		Cancel      time.Duration `json:"cancel"`    // cancelling them
	}
	memResult struct {
		HeapAlloc uint64 `json:"heap_alloc"`
		Sys       uint64 `json:"sys"`
	}
)

func (s *agentState) ops() map[string]agent.Op {
	ops := s.refOps()
	for name, op := range map[string]agent.Op{
		"node":    s.opNode,
		"members": s.opMembers,
		"socket":  dialOp(s, s.dialSocket),
		"goclient": dialOp(s, func(ctx context.Context, a addrArgs) (*bus.GoClient, error) {
			return bus.DialGoClient(ctx, a.Addr)
		}),
		"goclient-inline": s.opGoClientInline,
		"nats-server":     s.opNATSServer,
		"nats": dialOp(s, func(_ context.Context, a addrArgs) (*bus.NATS, error) {
			return bus.DialNATSConns(a.Addr, a.Conns)
		}),
		"recv":      s.opRecv,
		"send":      s.opSend,
		"go":        s.opGo,
		"abort":     s.opAbort,
		"ackto":     s.opAckTo,
		"pong":      s.opPong,
		"unpong":    s.opUnpong,
		"ping":      s.opPing,
		"idle-subs": s.opIdleSubs,
		"hold":      s.opHoldListeners,
		"drops":     s.opDrops,
		"memstats":  s.opMemstats,
	} {
		ops[name] = op
	}
	maps.Copy(ops, s.recordOps())
	return ops
}

// runAgent serves operations on stdin/stdout until told to quit.
func runAgent() error {
	s := &agentState{pongs: map[string]func(){}}
	defer s.closeAll()
	return agent.Serve(context.Background(), os.Stdin, os.Stdout, s.ops())
}

func (s *agentState) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, stop := range s.pongs {
		stop()
	}
	for name := range s.recording {
		_ = s.stopRecording(name)
	}
	if s.ep != nil {
		_ = s.ep.Close()
	}
	if s.nats != nil {
		s.nats.Shutdown()
	}
	if s.echo != nil {
		_ = s.echo.Close()
	}
	for _, c := range s.refs {
		_ = c.Close()
	}
}

func args[T any](raw json.RawMessage) (T, error) {
	var v T
	if len(raw) == 0 {
		return v, nil
	}
	err := json.Unmarshal(raw, &v)
	return v, err
}

func (s *agentState) setEndpoint(ep bus.Endpoint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ep != nil {
		return errors.New("agent already has an endpoint")
	}
	s.ep = ep
	return nil
}

func (s *agentState) endpoint() (bus.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ep == nil {
		return nil, errors.New("agent has no endpoint")
	}
	return s.ep, nil
}

func (s *agentState) opNode(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	c, err := args[bus.NodeConfig](raw)
	if err != nil {
		return nil, err
	}
	e, err := bus.NewEmbedded(c)
	if err != nil {
		return nil, err
	}
	if err := s.setEndpoint(e); err != nil {
		e.Close()
		return nil, err
	}
	s.emb = e
	res := addrResult{Addr: e.Node().GossipAddr().String()}
	if a := e.Node().SocketAddr(); a != nil {
		res.Socket = a.String()
	}
	if p := e.Node().SocketPath(); p != "" {
		res.Unix = sockclient.UnixPrefix + p
	}
	return res, nil
}

func (s *agentState) opMembers(context.Context, json.RawMessage, agent.Progress) (any, error) {
	if s.emb == nil {
		return nil, errors.New("agent runs no node")
	}
	return len(s.emb.Node().Members()), nil
}

// dialSocket dials the daemon's socket for the socket operation.
func (s *agentState) dialSocket(ctx context.Context, a addrArgs) (*bus.Socket, error) {
	ep, err := bus.DialSocket(ctx, a.Addr, a.Conns)
	if err == nil {
		s.mu.Lock()
		s.sockAddr = a.Addr
		s.mu.Unlock()
	}
	return ep, err
}

func (s *agentState) opNATSServer(context.Context, json.RawMessage, agent.Progress) (any, error) {
	srv, url, err := bus.StartNATSServer()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.nats = srv
	s.mu.Unlock()
	return addrResult{Addr: url}, nil
}

func (s *agentState) opRecv(ctx context.Context, raw json.RawMessage, progress agent.Progress) (any, error) {
	a, err := args[workload.RecvArgs](raw)
	if err != nil {
		return nil, err
	}
	ep, err := s.endpoint()
	if err != nil {
		return nil, err
	}
	var acker *workload.Acker
	if a.AckEvery > 0 {
		acker = workload.NewAcker(a.AckEvery)
		defer acker.Close()
	}
	s.mu.Lock()
	s.acker = acker
	s.mu.Unlock()
	return workload.Receive(ctx, ep, a, func(v any) { progress(v) }, acker)
}

// opAckTo points the running windowed receiver's acknowledgements at the
// sender's address.
func (s *agentState) opAckTo(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[addrArgs](raw)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	acker := s.acker
	s.mu.Unlock()
	if acker == nil {
		return nil, errors.New("no windowed receiver running")
	}
	return nil, acker.SetTarget(a.Addr)
}

func (s *agentState) opSend(ctx context.Context, raw json.RawMessage, progress agent.Progress) (any, error) {
	a, err := args[workload.SendArgs](raw)
	if err != nil {
		return nil, err
	}
	ep, err := s.endpoint()
	if err != nil {
		return nil, err
	}
	start := make(chan struct{})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.start, s.abort = start, cancel
	s.mu.Unlock()
	return workload.Send(ctx, ep, a, start, func(v any) { progress(v) })
}

// opAbort stops a running sender.
func (s *agentState) opAbort(context.Context, json.RawMessage, agent.Progress) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.abort != nil {
		s.abort()
	}
	return nil, nil
}

func (s *agentState) opGo(context.Context, json.RawMessage, agent.Progress) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.start == nil {
		return nil, errors.New("no sender waiting")
	}
	close(s.start)
	s.start = nil
	return nil, nil
}

func (s *agentState) opPong(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[pongArgs](raw)
	if err != nil {
		return nil, err
	}
	ep, err := s.endpoint()
	if err != nil {
		return nil, err
	}
	stop, err := workload.Pong(ep, a.In, a.Out)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.pongs[a.In] = stop
	s.mu.Unlock()
	return nil, nil
}

func (s *agentState) opUnpong(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[pongArgs](raw)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	stop := s.pongs[a.In]
	delete(s.pongs, a.In)
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	return nil, nil
}

func (s *agentState) opPing(ctx context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[workload.PingArgs](raw)
	if err != nil {
		return nil, err
	}
	ep, err := s.endpoint()
	if err != nil {
		return nil, err
	}
	return workload.Ping(ctx, ep, a)
}

// opIdleSubs measures the heap taken by N subscriptions that never see an
// event: the live heap after a GC before and after creating them, divided
// by N. The subscriptions are cancelled afterwards.
func (s *agentState) opIdleSubs(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[subsArgs](raw)
	if err != nil {
		return nil, err
	}
	ep, err := s.endpoint()
	if err != nil {
		return nil, err
	}
	topics := make([]string, a.N)
	for i := range topics {
		topics[i] = a.Prefix + strconv.Itoa(i) + "/"
	}
	before := settledHeap()
	cancels := make([]func(), 0, a.N)
	t0 := time.Now()
	for _, t := range topics {
		c, err := ep.Subscribe(t, func([]byte) {})
		if err != nil {
			return nil, err
		}
		cancels = append(cancels, c)
	}
	res := subsResult{N: a.N, Subscribe: time.Since(t0)}
	after := settledHeap()
	t0 = time.Now()
	for _, c := range cancels {
		c()
	}
	res.Cancel = time.Since(t0)
	res.BytesPerSub = (float64(after) - float64(before)) / float64(a.N)
	return res, nil
}

// countedFamily says whether a metric family is reported with each run:
// drops, losses, NACKs, repairs, datagram counts and the polls for
// answers (UDP readers and socket readers), the engine's receive paths
// and timer wake-ups.
func countedFamily(name string) bool {
	for _, w := range []string{"drop", "lost", "loss", "nack", "repair", "datagrams", "spin", "engine"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// opDrops returns the node's non-zero drop, loss, NACK, repair and datagram
// counters by name and labels; for a Go client endpoint, its quick
// deliveries (an empty map for an agent with neither).
func (s *agentState) opDrops(context.Context, json.RawMessage, agent.Progress) (any, error) {
	out := map[string]float64{}
	if s.emb == nil {
		if ep, err := s.endpoint(); err == nil {
			if g, ok := ep.(*bus.GoClient); ok {
				goClientCounters(g.Stats(), out)
			}
		}
		return out, nil
	}
	mfs, err := s.emb.Node().Registry().Gather()
	if err != nil {
		return nil, err
	}
	for _, mf := range mfs {
		name := mf.GetName()
		if !countedFamily(name) {
			continue
		}
		for _, m := range mf.GetMetric() {
			v := m.GetCounter().GetValue()
			if v == 0 {
				continue
			}
			key := name
			for _, l := range m.GetLabel() {
				key += fmt.Sprintf("{%s=%s}", l.GetName(), l.GetValue())
			}
			out[key] = v
		}
	}
	return out, nil
}

// goClientCounters adds a Go client's non-zero quick-delivery counters
// to out.
func goClientCounters(st client.BusStats, out map[string]float64) {
	for k, v := range map[string]uint64{"client_quick_deliveries": st.QuickDeliveries, "client_quick_hand_ons": st.QuickHandOns} {
		if v != 0 {
			out[k] = float64(v)
		}
	}
}

// opGoClientInline makes the Go client endpoint's later listeners deliver
// inline (client.WithInlineDelivery).
func (s *agentState) opGoClientInline(context.Context, json.RawMessage, agent.Progress) (any, error) {
	ep, err := s.endpoint()
	if err != nil {
		return nil, err
	}
	g, ok := ep.(*bus.GoClient)
	if !ok {
		return nil, errors.New("the agent's endpoint is not a Go client")
	}
	g.SetInline(true)
	return nil, nil
}
