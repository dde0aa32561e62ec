package meshmessage

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/scope"
)

// testClient is an EventMesh TCP client written from the reference's
// Package layout, independent of the package's codec.
type testClient struct {
	t  *testing.T
	nc net.Conn
}

// wireHeader is the header JSON as the test client writes and reads it.
type wireHeader struct {
	Cmd        string            `json:"cmd"`
	Code       int               `json:"code"`
	Desc       string            `json:"desc"`
	Seq        string            `json:"seq"`
	Properties map[string]string `json:"properties"`
}

// dial connects a test client to addr.
func dial(t *testing.T, addr string) *testClient {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return &testClient{t, nc}
}

// write sends a Package: magic, version, length, header length, header,
// body.
func (c *testClient) write(cmd, seq string, body any) {
	c.writeHeader(map[string]any{"cmd": cmd, "code": 0, "seq": seq}, body)
}

// writeHeader sends a Package with header h and body, in JSON.
func (c *testClient) writeHeader(h map[string]any, body any) {
	hb, _ := json.Marshal(h)
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	c.writeRaw(hb, b)
}

// writeRaw sends a Package of header and body bytes as they are.
func (c *testClient) writeRaw(h, b []byte) {
	out := append([]byte("EventMesh0000"), binary.BigEndian.AppendUint32(nil, uint32(13+len(h)+len(b)))...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(h)))
	out = append(append(out, h...), b...)
	if _, err := c.nc.Write(out); err != nil {
		c.t.Fatal(err)
	}
}

// response reads the next Package, which must be cmd, and returns its
// header and body.
func (c *testClient) response(cmd string) (wireHeader, []byte) {
	c.t.Helper()
	h, body, err := c.read()
	if err != nil || h.Cmd != cmd {
		c.t.Fatalf("waiting for %s: %s %s, %v", cmd, h.Cmd, body, err)
	}
	return h, body
}

// closed checks the server closes the connection, sending nothing more.
func (c *testClient) closed() {
	c.t.Helper()
	if h, body, err := c.read(); !errors.Is(err, io.EOF) {
		c.t.Fatalf("want the connection closed, got %s %s, %v", h.Cmd, body, err)
	}
}

// read receives a Package; it fails the test after 10 s.
func (c *testClient) read() (wireHeader, []byte, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	pre := make([]byte, 21)
	if _, err := io.ReadFull(c.nc, pre); err != nil {
		return wireHeader{}, nil, err
	}
	if string(pre[:13]) != "EventMesh0000" {
		c.t.Fatalf("prefix %q", pre[:13])
	}
	n, hl := binary.BigEndian.Uint32(pre[13:]), binary.BigEndian.Uint32(pre[17:])
	rest := make([]byte, n-13)
	if _, err := io.ReadFull(c.nc, rest); err != nil {
		c.t.Fatal(err)
	}
	var h wireHeader
	if err := json.Unmarshal(rest[:hl], &h); err != nil {
		c.t.Fatal(err)
	}
	return h, rest[hl:], nil
}

// expect reads Packages until it has one of each command in cmds, in any
// order, and returns their bodies by command.
func (c *testClient) expect(cmds ...string) map[string][]byte {
	c.t.Helper()
	want := map[string]bool{}
	for _, cmd := range cmds {
		want[cmd] = true
	}
	got := map[string][]byte{}
	for len(got) < len(want) {
		h, body, err := c.read()
		if err != nil {
			c.t.Fatalf("waiting for %v: %v", cmds, err)
		}
		if !want[h.Cmd] {
			c.t.Fatalf("got %s (%s), waiting for %v", h.Cmd, body, cmds)
		}
		if h.Code != 0 {
			c.t.Fatalf("%s code %d: %s", h.Cmd, h.Code, h.Desc)
		}
		got[h.Cmd] = body
	}
	return got
}

// startServer serves a Server on an embedded node.
func startServer(t *testing.T, cfg Config) (*Server, *client.Bus, string) {
	n := clienttest.StartNodes(t, 1)[0]
	bus := client.Embedded(n)
	t.Cleanup(func() { _ = bus.Close() })
	cfg.Logger = clienttest.Logger()
	s, err := New(bus, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close() })
	return s, bus, ln.Addr().String()
}

// message decodes an EventMeshMessage body.
func message(t *testing.T, body []byte) Message {
	var m Message
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return m
}

// TestSession runs a client through HELLO, SUBSCRIBE, LISTEN, messages
// both ways with ACKs, a BROADCAST, a heartbeat and goodbye.
func TestSession(t *testing.T) {
	s, bus, addr := startServer(t, Config{})
	rd, err := bus.NewReader(scope.MustParse("/robot/"))
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, addr)
	c.write("HELLO_REQUEST", "1", map[string]any{"subsystem": "5023"})
	c.expect("HELLO_RESPONSE")
	c.write("SUBSCRIBE_REQUEST", "2", Subscription{Topics: []SubscriptionItem{{Topic: "/robot/", Mode: "CLUSTERING"}, {Topic: "/all/", Mode: "BROADCASTING"}}})
	c.expect("SUBSCRIBE_RESPONSE")
	c.write("LISTEN_REQUEST", "3", nil)
	c.expect("LISTEN_RESPONSE")

	c.write("ASYNC_MESSAGE_TO_SERVER", "4", Message{Topic: "/robot/arm/", Properties: map[string]string{"color": "red"}, Body: "hi"})
	got := c.expect("ASYNC_MESSAGE_TO_SERVER_ACK", "ASYNC_MESSAGE_TO_CLIENT")
	if m := message(t, got["ASYNC_MESSAGE_TO_CLIENT"]); m.Topic != "/robot/arm/" || m.Body != "hi" || m.Properties["color"] != "red" {
		t.Fatalf("echoed message %+v", m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := rd.Read(ctx)
	if err != nil || ev.Scope.String() != "/robot/arm/" || string(ev.Data) != "hi" {
		t.Fatalf("bus event %v, %v", ev, err)
	}

	inf, err := bus.NewInformer(scope.MustParse("/robot/leg/"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inf.Publish(ctx, "from rsb"); err != nil {
		t.Fatal(err)
	}
	m := message(t, c.expect("ASYNC_MESSAGE_TO_CLIENT")["ASYNC_MESSAGE_TO_CLIENT"])
	if m.Topic != "/robot/leg/" || m.Body != "from rsb" {
		t.Fatalf("event from the bus %+v", m)
	}

	c.write("BROADCAST_MESSAGE_TO_SERVER", "5", Message{Topic: "/all/", Body: "everyone"})
	got = c.expect("BROADCAST_MESSAGE_TO_SERVER_ACK", "BROADCAST_MESSAGE_TO_CLIENT")
	if m := message(t, got["BROADCAST_MESSAGE_TO_CLIENT"]); m.Topic != "/all/" || m.Body != "everyone" {
		t.Fatalf("broadcast %+v", m)
	}

	c.write("HEARTBEAT_REQUEST", "6", nil)
	c.expect("HEARTBEAT_RESPONSE")
	c.write("UNSUBSCRIBE_REQUEST", "7", Subscription{Topics: []SubscriptionItem{{Topic: "/robot/"}}})
	c.expect("UNSUBSCRIBE_RESPONSE")
	c.write("CLIENT_GOODBYE_REQUEST", "8", nil)
	c.expect("CLIENT_GOODBYE_RESPONSE")
	if _, _, err := c.read(); !errors.Is(err, io.EOF) {
		t.Fatalf("after goodbye: %v", err)
	}
	testutil.WaitFor(t, 10*time.Second, "the client forgotten", func() bool { return s.Stats().Connections == 0 })
	if st := s.Stats(); st.Published != 2 || st.Rejected[RejectMalformed] != 0 || st.Closed[CloseGoodbye] != 1 || st.Subscribers != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestBadAndIdle checks a bad magic closes its connection, a silent
// client is closed after the heartbeat timeout, and Close says
// SERVER_GOODBYE, each leaving the other clients alone.
func TestBadAndIdle(t *testing.T) {
	s, _, addr := startServer(t, Config{HeartbeatTimeout: 300 * time.Millisecond})
	bad := dial(t, addr)
	if _, err := bad.nc.Write([]byte("EventMash0000\x00\x00\x00\x0d\x00\x00\x00\x00")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bad.read(); !errors.Is(err, io.EOF) {
		t.Fatalf("after a bad magic: %v", err)
	}
	idle := dial(t, addr)
	if _, _, err := idle.read(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle client: %v", err)
	}
	testutil.WaitFor(t, 10*time.Second, "the counters", func() bool {
		st := s.Stats()
		return st.Rejected[RejectBadMagic] == 1 && st.Closed[CloseBadPackage] == 1 && st.Closed[CloseHeartbeat] == 1 && st.Connections == 0
	})

	s2, _, addr2 := startServer(t, Config{})
	c := dial(t, addr2)
	c.write("HELLO_REQUEST", "1", nil)
	c.expect("HELLO_RESPONSE")
	go func() { _ = s2.Close() }()
	c.expect("SERVER_GOODBYE_REQUEST")
	if _, _, err := c.read(); !errors.Is(err, io.EOF) {
		t.Fatalf("after SERVER_GOODBYE: %v", err)
	}
	if n := s2.Stats().Closed[CloseShutdown]; n != 1 {
		t.Fatalf("closed for shutdown: %d", n)
	}
}

// TestQueueBound checks events past a client's queue bound are dropped
// and counted.
func TestQueueBound(t *testing.T) {
	s := &Server{cfg: Config{QueueLen: 2}.withDefaults(), st: mesh.NewCounters(Protocol, reasons), ctx: context.Background()}
	c := newConn(s, nil)
	ev := &client.Event{Event: *testutil.Event("/a/", 1, []byte("x"))}
	c.deliver(ev, AsyncMessageToClient)
	if st := s.Stats(); st.Delivered != 0 || st.Dropped[DropQueueFull] != 0 {
		t.Fatalf("delivered before LISTEN: %+v", st)
	}
	c.listening.Store(true)
	for range 5 {
		c.deliver(ev, AsyncMessageToClient)
	}
	if st := s.Stats(); st.Delivered != 2 || st.Dropped[DropQueueFull] != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// TestConfig checks the zero Config works and bad ones are refused.
func TestConfig(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatal(err)
	}
	if d := DefaultConfig(); d.Validate() != nil || d.QueueLen != DefaultQueueLen || d.HeartbeatTimeout != DefaultHeartbeatTimeout {
		t.Fatalf("DefaultConfig %+v", d)
	}
	for _, c := range []Config{{HeartbeatTimeout: -1}, {QueueLen: -1}, {WriteTimeout: -1}, {MaxClients: -1},
		{RequestTimeout: -1}, {RequestTimeout: MaxRequestTimeout + 1}, {MaxRequests: -1}, {Tokens: []mesh.Token{{Value: "a b"}}}} {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// TestGoodbyeAfterMessages checks CLIENT_GOODBYE's response comes after
// the answers to what the client sent before it, then the connection
// closes.
func TestGoodbyeAfterMessages(t *testing.T) {
	s, _, addr := startServer(t, Config{})
	c := dial(t, addr)
	for i := range 20 {
		c.write("ASYNC_MESSAGE_TO_SERVER", fmt.Sprint(i), Message{Topic: "/bye/", Body: "x"})
	}
	c.write("CLIENT_GOODBYE_REQUEST", "last", nil)
	for i := range 20 {
		if h, _ := c.response("ASYNC_MESSAGE_TO_SERVER_ACK"); h.Seq != fmt.Sprint(i) || h.Code != 0 {
			t.Fatalf("ACK %d: %+v", i, h)
		}
	}
	c.response("CLIENT_GOODBYE_RESPONSE")
	c.closed()
	if n := s.Stats().Closed[CloseGoodbye]; n != 1 {
		t.Fatalf("closed for goodbye: %d", n)
	}
}
