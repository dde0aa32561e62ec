package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/bench/internal/agent"
	"github.com/rsbd/rsbd/bench/internal/bus"
)

// holdResult is what opHoldListeners did.
type holdResult struct {
	N int `json:"n"`
	// Announce is how long subscribing the N listeners took, Confirm how
	// long until an event on the last one's scope arrived.
	Announce time.Duration `json:"announce"`
	Confirm  time.Duration `json:"confirm"`
}

// opHoldListeners announces N idle listeners on distinct scopes through the
// agent's socket endpoint and keeps them until the agent ends (they end
// with its connection, without a Bye each). It returns
// once the daemon delivers an event on the last scope, published by a
// short-lived second client: the daemon handles a connection's Hellos in
// order, so by then it has taken in all of them.
func (s *agentState) opHoldListeners(ctx context.Context, raw json.RawMessage, _ agent.Progress) (any, error) {
	a, err := args[subsArgs](raw)
	if err != nil {
		return nil, err
	}
	if a.N < 1 {
		return nil, errors.New("hold needs N >= 1")
	}
	ep, err := s.endpoint()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	addr := s.sockAddr
	s.mu.Unlock()
	if addr == "" {
		return nil, errors.New("hold needs a socket endpoint")
	}
	var got atomic.Bool
	t0 := time.Now()
	last := ""
	for i := 0; i < a.N; i++ {
		last = a.Prefix + strconv.Itoa(i) + "/"
		fn := func([]byte) {}
		if i == a.N-1 {
			fn = func([]byte) { got.Store(true) }
		}
		if _, err := ep.Subscribe(last, fn); err != nil {
			return nil, fmt.Errorf("listener %d: %w", i, err)
		}
	}
	res := holdResult{N: a.N, Announce: time.Since(t0)}
	t0 = time.Now()
	if err := confirmDelivery(ctx, addr, last, &got); err != nil {
		return nil, err
	}
	res.Confirm = time.Since(t0)
	return res, nil
}

// confirmDelivery publishes on topic from a client of its own until got is
// set, for at most setupTimeout.
func confirmDelivery(ctx context.Context, addr, topic string, got *atomic.Bool) error {
	pub, err := bus.DialSocket(ctx, addr, 1)
	if err != nil {
		return err
	}
	defer pub.Close()
	deadline := time.Now().Add(setupTimeout)
	for !got.Load() {
		if time.Now().After(deadline) {
			return fmt.Errorf("no delivery on %s within %v", topic, setupTimeout)
		}
		if err := pub.Publish(topic, []byte("confirm")); err != nil {
			return err
		}
		if err := pub.Flush(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}
