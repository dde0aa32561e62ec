package bridge_test

import (
	"context"
	"errors"
	"sync"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// memKind is the in-memory broker the runner's tests use.
const memKind = "memory"

// memBroker is an in-memory broker: a log per address, committed offsets,
// and failures the test injects.
type memBroker struct {
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every append
	logs     map[string][]bridge.Message
	commit   map[string]int
	failSend int // Sends to fail before the next succeeds
	failRecv int // Receives to end with an error at once
	sends    int // Sends attempted
}

var brokers = struct {
	sync.Mutex
	m map[string]*memBroker
}{m: map[string]*memBroker{}}

func init() {
	bridge.Register(memKind, func(s bridge.Settings) (bridge.Broker, error) {
		if err := s.CheckOptions(); err != nil {
			return nil, err
		}
		return memOf(s.URL), nil
	})
}

// memOf returns the in-memory broker named url.
func memOf(url string) *memBroker {
	brokers.Lock()
	defer brokers.Unlock()
	b := brokers.m[url]
	if b == nil {
		b = &memBroker{changed: make(chan struct{}), logs: map[string][]bridge.Message{}, commit: map[string]int{}}
		brokers.m[url] = b
	}
	return b
}

var errInjected = errors.New("injected failure")

// add appends a message to address's log.
func (b *memBroker) add(address string, m bridge.Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.logs[address] = append(b.logs[address], m)
	close(b.changed)
	b.changed = make(chan struct{})
}

// events returns the events in address's log.
func (b *memBroker) events(address string) []*cloudevent.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*cloudevent.Event
	for _, m := range b.logs[address] {
		out = append(out, m.Event)
	}
	return out
}

// committed returns address's committed offset.
func (b *memBroker) committed(address string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.commit[address]
}

func (b *memBroker) NewSender(_ context.Context, address string) (bridge.Sender, error) {
	return &memSender{b: b, address: address}, nil
}

func (b *memBroker) NewReceiver(_ context.Context, address string) (bridge.Receiver, error) {
	return &memReceiver{b: b, address: address}, nil
}

func (b *memBroker) Close() error { return nil }

type memSender struct {
	b       *memBroker
	address string
}

// Send appends the batch, unless a failure is due or an event has the
// extension "reject" (except to the dead-letter addresses "dlq" and
// "/queue/dlq").
func (s *memSender) Send(_ context.Context, events []*cloudevent.Event) error {
	s.b.mu.Lock()
	s.b.sends++
	fail := s.b.failSend > 0
	if fail {
		s.b.failSend--
	}
	s.b.mu.Unlock()
	if fail {
		return errInjected
	}
	for _, e := range events {
		if e.Extensions["reject"] != "" && s.address != "dlq" && s.address != "/queue/dlq" {
			return bridge.ErrRejected
		}
	}
	for _, e := range events {
		s.b.add(s.address, bridge.Message{Event: e})
	}
	return nil
}

func (s *memSender) Close() error { return nil }

type memReceiver struct {
	b       *memBroker
	address string
}

// Receive delivers from the committed offset on and commits after each
// delivery.
func (r *memReceiver) Receive(ctx context.Context, deliver bridge.Deliver) error {
	for {
		r.b.mu.Lock()
		if r.b.failRecv > 0 {
			r.b.failRecv--
			r.b.mu.Unlock()
			return errInjected
		}
		off, log, changed := r.b.commit[r.address], r.b.logs[r.address], r.b.changed
		r.b.mu.Unlock()
		if off < len(log) {
			if err := deliver(ctx, log[off]); err != nil {
				return err
			}
			r.b.mu.Lock()
			r.b.commit[r.address] = off + 1
			r.b.mu.Unlock()
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

func (r *memReceiver) Close() error { return nil }
