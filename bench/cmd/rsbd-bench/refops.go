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
		"udp-echo": s.opUDPEcho,
		"udp": dialOp(s, func(_ context.Context, a addrArgs) (*bus.UDPClient, error) {
			return bus.DialUDP(a.Addr)
		}),
		"mcast-echo": serveOp(s, func(a addrArgs) (*bus.McastEcho, error) {
			return bus.StartMcastEcho(a.Addr, a.Group) // joins Addr, echoes to Group
		}),
		"mcast": dialOp(s, func(_ context.Context, a addrArgs) (*bus.McastClient, error) {
			return bus.DialMcast(a.Addr, a.Group) // sends to the echo at Addr, listens on Group
		}),
		"tcp-relay": serveOp(s, func(a relayArgs) (*bus.TCPRelay, error) { return bus.StartTCPRelay(a.Unix) }),
		"tcp-echo":  serveOp(s, func(a addrArgs) (*bus.TCPEcho, error) { return bus.StartTCPEcho(a.Addr) }),
		"tcp": dialOp(s, func(_ context.Context, a addrArgs) (*bus.TCPClient, error) {
			return bus.DialTCP(a.Addr)
		}),
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

// dialOp returns an operation that decodes its arguments as A, dials an
// endpoint with them and makes it the agent's; an endpoint the agent
// cannot take (it has one) is closed again.
func dialOp[A any, E bus.Endpoint](s *agentState, dial func(context.Context, A) (E, error)) agent.Op {
	return func(ctx context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
		a, err := args[A](raw)
		if err != nil {
			return nil, err
		}
		ep, err := dial(ctx, a)
		if err != nil {
			return nil, err
		}
		if err := s.setEndpoint(ep); err != nil {
			_ = ep.Close()
			return nil, err
		}
		return nil, nil
	}
}

// serveOp returns an operation that decodes its arguments as A, starts a
// reference's server side with them and keeps it until the agent ends;
// its result is the server's address when it has one.
func serveOp[A any, R io.Closer](s *agentState, start func(A) (R, error)) agent.Op {
	return func(_ context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
		a, err := args[A](raw)
		if err != nil {
			return nil, err
		}
		r, err := start(a)
		if err != nil {
			return nil, err
		}
		s.keepRef(r)
		if ad, ok := any(r).(interface{ Addr() string }); ok {
			return addrResult{Addr: ad.Addr()}, nil
		}
		return nil, nil
	}
}
