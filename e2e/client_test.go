package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
	"github.com/rsbd/rsbd/proto/rsbpb/operatingsystem"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
)

// Wire schemas of the test events.
const (
	schemaProbe = "probe"        // waitRoute's probes; data is a token
	schemaText  = "utf-8-string" // ordinary test events
	schemaBytes = "bytes"        // large events
)

// client is a raw RSB socket client: it frames Notifications itself and
// announces its listeners with introspection Hellos, as RSB clients do.
type client struct {
	t    *testing.T
	d    *daemon
	name string
	conn *sockclient.ClientConn
	id   [16]byte // participant id of the events it publishes

	mu     sync.Mutex
	seq    uint32
	evs    []*notification.Event
	at     []time.Time // arrival time of each of evs
	readEr error
	done   chan struct{} // closed when the reader stops
}

// dial connects a client to d that reads everything the daemon sends it.
func dial(t *testing.T, d *daemon, name string) *client {
	t.Helper()
	c := connect(t, d, name, nil)
	go c.read()
	return c
}

// dialStalled connects a client that never reads, with a small kernel
// receive buffer, so that the daemon's queue for it fills quickly.
func dialStalled(t *testing.T, d *daemon, name string) *client {
	t.Helper()
	dialer := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		rc.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	return connect(t, d, name, &dialer)
}

func connect(t *testing.T, d *daemon, name string, dialer *net.Dialer) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if dialer == nil {
		dialer = &net.Dialer{}
	}
	network, addr := "tcp", d.Info().Socket
	if d.Info().SocketPath != "" && d.Netns() != "" {
		network, addr = "unix", d.Info().SocketPath // the daemon's loopback is its namespace's
	}
	nc, err := dialer.DialContext(ctx, network, addr)
	if err != nil {
		t.Fatalf("%s: dial %s: %v", name, d.Name(), err)
	}
	conn, err := sockclient.NewClientConn(ctx, nc, sockclient.ClientConfig{CloseTimeout: 2 * time.Second})
	if err != nil {
		nc.Close()
		t.Fatalf("%s: handshake with %s: %v", name, d.Name(), err)
	}
	c := &client{t: t, d: d, name: name, conn: conn, id: notification.NewParticipantID(), done: make(chan struct{})}
	t.Cleanup(func() { conn.Close() })
	return c
}

// read stores every event the daemon sends until the connection ends.
func (c *client) read() {
	defer close(c.done)
	for {
		body, err := c.conn.Recv()
		if errors.Is(err, io.EOF) {
			// The daemon shut its side down: answer in kind, as RSB
			// clients do, so its orderly shutdown need not time out.
			c.conn.CloseWrite()
		}
		if err != nil {
			c.mu.Lock()
			c.readEr = err
			c.mu.Unlock()
			return
		}
		ev, err := notification.Unmarshal(body)
		if err != nil {
			c.mu.Lock()
			c.readEr = fmt.Errorf("undecodable frame: %w", err)
			c.mu.Unlock()
			return
		}
		c.mu.Lock()
		c.evs = append(c.evs, ev)
		c.at = append(c.at, time.Now())
		c.mu.Unlock()
	}
}

// event builds the client's next event.
func (c *client) event(sc, schema string, data []byte) *notification.Event {
	c.mu.Lock()
	seq := c.seq
	c.seq++
	c.mu.Unlock()
	now := time.Now().UnixMicro()
	return &notification.Event{Scope: scope.MustParse(sc), WireSchema: schema, Data: data,
		ID:       notification.EventID{SenderID: c.id, SequenceNumber: seq},
		MetaData: notification.MetaData{CreateTime: now, SendTime: now}}
}

// publish sends one event.
func (c *client) publish(sc, schema string, data []byte) {
	c.t.Helper()
	c.publishAll([]*notification.Event{c.event(sc, schema, data)})
}

// publishAll sends events in order, coalescing frames into few writes.
func (c *client) publishAll(evs []*notification.Event) {
	c.t.Helper()
	bodies := make([][]byte, len(evs))
	for i, ev := range evs {
		b, err := notification.Marshal(ev)
		if err != nil {
			c.t.Fatal(err)
		}
		bodies[i] = b
	}
	c.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if err := c.conn.SendMany(bodies); err != nil {
		c.t.Fatalf("%s: send: %v", c.name, err)
	}
}

// listen announces a listener on each scope, publishing the introspection
// Hello an RSB client sends when it creates one, and waits until the daemon
// has taken each Hello into account: it forwards a Hello to its other
// clients only after learning from it, and its witness client (a listener
// on the introspection scope) sees the Hello then. Events published
// afterwards are routed by the new interest; before, the connection, having
// announced nothing yet, wanted everything. The Hello is sent again while
// the witness has not seen it (the witness may not have been a delivery
// target yet), as RSB clients repeat Hellos in answer to surveys.
func (c *client) listen(scopes ...string) {
	c.t.Helper()
	w := c.d.witness(c.t)
	for _, sc := range scopes {
		id := notification.NewParticipantID()
		participant := c.announce(id, sc)
		hello := func(ev *notification.Event) bool {
			return ev.WireSchema == rsbsocket.HelloWireSchema && ev.Scope.String() == participant
		}
		next := time.Now().Add(200 * time.Millisecond)
		testutil.WaitFor(c.t, 10*time.Second, c.name+"'s Hello taken into account", func() bool {
			if w.count(hello) > 0 {
				return true
			}
			if time.Now().After(next) {
				c.announce(id, sc)
				next = time.Now().Add(200 * time.Millisecond)
			}
			return false
		})
	}
}

// announce publishes the Hello of listener id on sc and returns the
// participant scope it was published on.
func (c *client) announce(id [16]byte, sc string) string {
	c.t.Helper()
	data, err := helloData(id, sc)
	if err != nil {
		c.t.Fatal(err)
	}
	participant := participantScope(id)
	c.publish(participant, rsbsocket.HelloWireSchema, data)
	return participant
}

// helloData is the serialized introspection Hello of listener id on sc.
func helloData(id [16]byte, sc string) ([]byte, error) {
	return proto.Marshal(&introspection.Hello{
		Kind:      proto.String("listener"),
		Id:        id[:],
		Scope:     proto.String(sc),
		Transport: []string{"socket://localhost:55555?tcpnodelay=1"},
		Process: &operatingsystem.Process{Id: proto.String(fmt.Sprint(os.Getpid())),
			ProgramName: proto.String("rsbd-e2e"), StartTime: proto.Uint64(uint64(time.Now().UnixMicro()))},
		Host: &operatingsystem.Host{Id: proto.String("e2e-host"), Hostname: proto.String("localhost")},
	})
}

// participantScope is the introspection scope participant id announces
// itself on.
func participantScope(id [16]byte) string {
	return rsbsocket.ParticipantsScope.String() + notification.FormatUUID(id) + "/"
}

// received returns the events matching keep, in arrival order.
func (c *client) received(keep func(*notification.Event) bool) []*notification.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*notification.Event
	for _, ev := range c.evs {
		if keep(ev) {
			out = append(out, ev)
		}
	}
	return out
}

// count returns how many received events match keep.
func (c *client) count(keep func(*notification.Event) bool) int { return len(c.received(keep)) }

// stopped waits up to timeout for the reader to stop and returns the error
// that stopped it.
func (c *client) stopped(timeout time.Duration) (bool, error) {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return true, c.readEr
	case <-time.After(timeout):
		return false, nil
	}
}

// onScope keeps the events of schema on sc or its sub-scopes.
func onScope(sc, schema string) func(*notification.Event) bool {
	s := scope.MustParse(sc)
	return func(ev *notification.Event) bool { return ev.WireSchema == schema && s.Contains(ev.Scope) }
}

var probeSeq struct {
	sync.Mutex
	n int
}

// waitRoute publishes probe events on sc from pub until every listener
// has received one: it returns once the interest of all listeners has
// reached pub's daemon and events flow. It returns how long that took.
func waitRoute(t *testing.T, timeout time.Duration, pub *client, sc string, listeners ...*client) time.Duration {
	t.Helper()
	probeSeq.Lock()
	probeSeq.n++
	token := fmt.Sprintf("probe-%d-", probeSeq.n)
	probeSeq.Unlock()
	got := func(ev *notification.Event) bool {
		return ev.WireSchema == schemaProbe && strings.HasPrefix(string(ev.Data), token)
	}
	next, i := time.Now(), 0
	return testutil.WaitFor(t, timeout, fmt.Sprintf("probes on %s from %s", sc, pub.name), func() bool {
		all := true
		for _, l := range listeners {
			all = all && l.count(got) > 0
		}
		if !all && time.Now().After(next) {
			pub.publish(sc, schemaProbe, fmt.Appendf(nil, "%s%d", token, i))
			i++
			next = time.Now().Add(50 * time.Millisecond)
		}
		return all
	})
}

// close ends the client's connection and waits for its reader to stop.
func (c *client) close() {
	c.conn.Close()
	<-c.done
}
