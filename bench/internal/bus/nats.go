package bus

import (
	"fmt"
	"strings"
	"sync"
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
	url   string
	pub   atomic.Pointer[nats.Conn] // the first connection: publishes
	mu    sync.Mutex                // guards conns
	conns []*nats.Conn
	next  atomic.Uint32
}

// DialNATS connects to the server at url.
func DialNATS(url string) (*NATS, error) { return DialNATSConns(url, 1) }

// DialNATSConns opens n connections to the server at url.
func DialNATSConns(url string, n int) (*NATS, error) {
	c := &NATS{url: url}
	for i := 0; i < max(n, 1); i++ {
		nc, err := dialNATS(url)
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		c.conns = append(c.conns, nc)
	}
	c.pub.Store(c.conns[0])
	return c, nil
}

func dialNATS(url string) (*nats.Conn, error) {
	return nats.Connect(url, nats.Name("rsbd-bench"), nats.NoReconnect())
}

// live returns connection i, replaced by a fresh one if it was closed: the
// server closes a subscriber that falls too far behind (a slow consumer),
// which fails that run, and the runs after it start on a new connection.
func (n *NATS) live(i int) (*nats.Conn, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if nc := n.conns[i]; !nc.IsClosed() {
		return nc, nil
	}
	nc, err := dialNATS(n.url)
	if err != nil {
		return nil, err
	}
	n.conns[i] = nc
	if i == 0 {
		n.pub.Store(nc)
	}
	return nc, nil
}

// Subject converts an RSB scope to a NATS subject.
func Subject(topic string) string {
	return strings.ReplaceAll(strings.Trim(topic, "/"), "/", ".")
}

// Publish hands payload to nats.go's write buffer.
func (n *NATS) Publish(topic string, payload []byte) error {
	return n.pub.Load().Publish(Subject(topic), payload)
}

var _ TopicPublisher = (*NATS)(nil)

// PublishOn returns a function that publishes on topic, its subject
// converted once, as the rsbd endpoints parse a topic's scope once.
func (n *NATS) PublishOn(topic string) (func(payload []byte) error, error) {
	subj := Subject(topic)
	return func(p []byte) error { return n.pub.Load().Publish(subj, p) }, nil
}

// Flush does nothing: nats.go's flusher goroutine writes the buffer as soon
// as it is signalled by Publish.
func (n *NATS) Flush() error { return nil }

// Sync waits for the server's answer to a PING, so every earlier publish
// has reached the server.
func (n *NATS) Sync() error { return n.pub.Load().FlushTimeout(60 * time.Second) }

// Subscribe subscribes to the topic's subject (on the next connection in
// turn) with unlimited client-side pending limits (no client-side drops)
// and waits until the server has the subscription. A connection the
// server has closed is replaced first (live).
func (n *NATS) Subscribe(topic string, fn Handler) (func(), error) {
	nc, err := n.live(int(n.next.Add(1)-1) % len(n.conns))
	if err != nil {
		return nil, err
	}
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
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, nc := range n.conns {
		nc.Close()
	}
	return nil
}
