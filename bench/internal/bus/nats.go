package bus

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// NATSMaxPayload is the server's max_payload: room for a 1 MiB payload.
const NATSMaxPayload = 2 << 20

// StartNATSServer starts a NATS server on 127.0.0.1 with an ephemeral port
// and default settings except max_payload, and returns it with its URL.
func StartNATSServer() (*server.Server, string, error) {
	s, err := server.NewServer(&server.Options{
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		MaxPayload: NATSMaxPayload,
		NoLog:      true,
		NoSigs:     true,
	})
	if err != nil {
		return nil, "", err
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, "", fmt.Errorf("nats server not ready")
	}
	return s, s.ClientURL(), nil
}

// NATS is a nats.go client; topics (RSB scopes) become subjects
// (/bench/thr/1/ -> bench.thr.1). It may hold several connections:
// publishes go out on the first, subscriptions are spread over all of them
// in turn.
type NATS struct {
	nc    *nats.Conn // the first connection: publishes
	conns []*nats.Conn
	next  atomic.Uint32
}

// DialNATS connects to the server at url.
func DialNATS(url string) (*NATS, error) { return DialNATSConns(url, 1) }

// DialNATSConns opens n connections to the server at url.
func DialNATSConns(url string, n int) (*NATS, error) {
	c := &NATS{}
	for i := 0; i < max(n, 1); i++ {
		nc, err := nats.Connect(url, nats.Name("rsbd-bench"), nats.NoReconnect())
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		c.conns = append(c.conns, nc)
	}
	c.nc = c.conns[0]
	return c, nil
}

// Subject converts an RSB scope to a NATS subject.
func Subject(topic string) string {
	return strings.ReplaceAll(strings.Trim(topic, "/"), "/", ".")
}

// Publish hands payload to nats.go's write buffer.
func (n *NATS) Publish(topic string, payload []byte) error {
	return n.nc.Publish(Subject(topic), payload)
}

// Flush does nothing: nats.go's flusher goroutine writes the buffer as soon
// as it is signalled by Publish.
func (n *NATS) Flush() error { return nil }

// Sync waits for the server's answer to a PING, so every earlier publish
// has reached the server.
func (n *NATS) Sync() error { return n.nc.FlushTimeout(60 * time.Second) }

// Subscribe subscribes to the topic's subject (on the next connection in
// turn) with unlimited client-side pending limits (no client-side drops)
// and waits until the server has the subscription.
func (n *NATS) Subscribe(topic string, fn Handler) (func(), error) {
	nc := n.conns[int(n.next.Add(1)-1)%len(n.conns)]
	sub, err := nc.Subscribe(Subject(topic), func(m *nats.Msg) { fn(m.Data) })
	if err != nil {
		return nil, err
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return nil, err
	}
	if err := nc.Flush(); err != nil {
		return nil, err
	}
	return func() { _ = sub.Unsubscribe() }, nil
}

// InlineReply reports true: nats.go runs a handler on its subscription's
// own goroutine and allows Publish from it.
func (n *NATS) InlineReply() bool { return true }

// Close closes every connection.
func (n *NATS) Close() error {
	for _, nc := range n.conns {
		nc.Close()
	}
	return nil
}
