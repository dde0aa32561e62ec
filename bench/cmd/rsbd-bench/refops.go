package main

import (
	"context"
	"encoding/json"
	"io"

	"github.com/rsbd/rsbd/bench/internal/agent"
	"github.com/rsbd/rsbd/bench/internal/bus"
)

// refOps are the agent operations of the raw references: UDP unicast and
// multicast ping-pong, and the TCP relay.
func (s *agentState) refOps() map[string]agent.Op {
	return map[string]agent.Op{
		"udp-echo":   s.opUDPEcho,
		"udp":        s.opUDP,
		"mcast-echo": s.opMcastEcho,
		"mcast":      s.opMcast,
		"tcp-relay":  s.opTCPRelay,
		"tcp-echo":   s.opTCPEcho,
		"tcp":        s.opTCP,
	}
}

// relayArgs are the arguments of the tcp-relay operation.
type relayArgs struct {
	Unix bool `json:"unix,omitempty"`
}

// keepRef holds a reference's server side until the agent ends.
func (s *agentState) keepRef(c io.Closer) {
	s.mu.Lock()
	s.refs = append(s.refs, c)
	s.mu.Unlock()
}

func (s *agentState) opUDPEcho(context.Context, json.RawMessage, agent.Progress) (any, error) {
	e, err := bus.StartUDPEcho()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.echo = e
	s.mu.Unlock()
	return addrResult{Addr: e.Addr()}, nil
}

func (s *agentState) opUDP(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[addrArgs](raw)
	if err != nil {
		return nil, err
	}
	ep, err := bus.DialUDP(a.Addr)
	if err != nil {
		return nil, err
	}
	return nil, s.setEndpoint(ep)
}

// opMcastEcho joins the group in Addr and echoes to the group in Group.
func (s *agentState) opMcastEcho(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[addrArgs](raw)
	if err != nil {
		return nil, err
	}
	e, err := bus.StartMcastEcho(a.Addr, a.Group)
	if err != nil {
		return nil, err
	}
	s.keepRef(e)
	return addrResult{Addr: e.Addr()}, nil
}

// opMcast makes a multicast pinger that sends to the echo at Addr and
// listens on Group.
func (s *agentState) opMcast(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[addrArgs](raw)
	if err != nil {
		return nil, err
	}
	ep, err := bus.DialMcast(a.Addr, a.Group)
	if err != nil {
		return nil, err
	}
	if err := s.setEndpoint(ep); err != nil {
		_ = ep.Close()
		return nil, err
	}
	return nil, nil
}

// opTCPRelay starts the relay, on a Unix socket if Unix is set.
func (s *agentState) opTCPRelay(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[relayArgs](raw)
	if err != nil {
		return nil, err
	}
	r, err := bus.StartTCPRelay(a.Unix)
	if err != nil {
		return nil, err
	}
	s.keepRef(r)
	return addrResult{Addr: r.Addr()}, nil
}

func (s *agentState) opTCPEcho(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[addrArgs](raw)
	if err != nil {
		return nil, err
	}
	e, err := bus.StartTCPEcho(a.Addr)
	if err != nil {
		return nil, err
	}
	s.keepRef(e)
	return nil, nil
}

func (s *agentState) opTCP(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[addrArgs](raw)
	if err != nil {
		return nil, err
	}
	ep, err := bus.DialTCP(a.Addr)
	if err != nil {
		return nil, err
	}
	if err := s.setEndpoint(ep); err != nil {
		_ = ep.Close()
		return nil, err
	}
	return nil, nil
}
