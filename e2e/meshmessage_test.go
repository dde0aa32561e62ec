package e2e

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	rsbclient "github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// emPackage is one Package as the EventMesh test client reads it.
type emPackage struct {
	Cmd   string            `json:"cmd"`
	Code  int               `json:"code"`
	Desc  string            `json:"desc"`
	Seq   string            `json:"seq"`
	Props map[string]string `json:"properties"`
	body  []byte
}

// emMessage is an EventMeshMessage, the body of the message commands.
type emMessage struct {
	Topic      string            `json:"topic"`
	Properties map[string]string `json:"properties,omitempty"`
	Body       string            `json:"body"`
}

// emClient is an EventMesh TCP client written from the reference's
// Package layout ("EventMesh", "0000", length = 13 + header + body,
// header length, header JSON, body), independent of rsbd's codec. A
// reader goroutine acknowledges every message pushed to it, as EventMesh
// clients do, and hands each Package to the test.
type emClient struct {
	t   *testing.T
	nc  net.Conn
	in  chan emPackage
	err chan error
	seq int
}

// dialEventMesh connects an EventMesh client to addr.
func dialEventMesh(t *testing.T, addr string) *emClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &emClient{t: t, nc: nc, in: make(chan emPackage, 256), err: make(chan error, 1)}
	t.Cleanup(func() { _ = nc.Close() })
	go c.read()
	return c
}

// send writes a Package of cmd with body in JSON and returns its seq.
func (c *emClient) send(cmd string, body any) string {
	c.t.Helper()
	c.seq++
	seq := fmt.Sprint(c.seq)
	c.sendSeq(cmd, seq, 0, body)
	return seq
}

// sendSeq writes a Package of cmd with the given seq, code and body.
func (c *emClient) sendSeq(cmd, seq string, code int, body any) {
	c.t.Helper()
	h, _ := json.Marshal(map[string]any{"cmd": cmd, "code": code, "seq": seq,
		"properties": map[string]string{"protocoltype": "eventmeshmessage", "protocoldesc": "tcp"}})
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	var pre [21]byte
	copy(pre[:], "EventMesh0000")
	binary.BigEndian.PutUint32(pre[13:], uint32(13+len(h)+len(b)))
	binary.BigEndian.PutUint32(pre[17:], uint32(len(h)))
	if _, err := c.nc.Write(append(append(pre[:], h...), b...)); err != nil {
		c.t.Fatal(err)
	}
}

// read decodes Packages until the connection ends, acknowledging pushed
// messages.
func (c *emClient) read() {
	defer close(c.in)
	for {
		var pre [21]byte
		if _, err := io.ReadFull(c.nc, pre[:]); err != nil {
			c.err <- err
			return
		}
		if string(pre[:13]) != "EventMesh0000" {
			c.err <- fmt.Errorf("prefix %q", pre[:13])
			return
		}
		n, hl := binary.BigEndian.Uint32(pre[13:]), binary.BigEndian.Uint32(pre[17:])
		if n < 13 || hl > n-13 || n > 4<<20 {
			c.err <- fmt.Errorf("lengths %d, %d", n, hl)
			return
		}
		rest := make([]byte, n-13)
		if _, err := io.ReadFull(c.nc, rest); err != nil {
			c.err <- err
			return
		}
		var p emPackage
		if err := json.Unmarshal(rest[:hl], &p); err != nil {
			c.err <- fmt.Errorf("header %q: %w", rest[:hl], err)
			return
		}
		p.body = rest[hl:]
		switch p.Cmd {
		case "ASYNC_MESSAGE_TO_CLIENT", "BROADCAST_MESSAGE_TO_CLIENT", "REQUEST_TO_CLIENT", "RESPONSE_TO_CLIENT":
			h, _ := json.Marshal(map[string]any{"cmd": p.Cmd + "_ACK", "code": 0, "seq": p.Seq})
			var ack [21]byte
			copy(ack[:], "EventMesh0000")
			binary.BigEndian.PutUint32(ack[13:], uint32(13+len(h)))
			binary.BigEndian.PutUint32(ack[17:], uint32(len(h)))
			_, _ = c.nc.Write(append(ack[:], h...))
		}
		c.in <- p
	}
}

// await returns the first Package that keep accepts, skipping others; it
// fails the test after timeout.
func (c *emClient) await(timeout time.Duration, what string, keep func(emPackage) bool) emPackage {
	c.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case p, ok := <-c.in:
			if !ok {
				c.t.Fatalf("waiting for %s: connection ended: %v", what, <-c.err)
			}
			if keep(p) {
				return p
			}
		case <-deadline:
			c.t.Fatalf("waiting for %s: timed out", what)
		}
	}
}

// answer waits for the response cmd to the Package seq and checks its
// code is 0.
func (c *emClient) answer(cmd, seq string) emPackage {
	c.t.Helper()
	p := c.await(30*time.Second, cmd+" "+seq, func(p emPackage) bool { return p.Cmd == cmd && p.Seq == seq })
	if p.Code != 0 {
		c.t.Fatalf("%s %s: code %d %s", cmd, seq, p.Code, p.Desc)
	}
	return p
}

// message decodes a Package's EventMeshMessage.
func (p emPackage) message(t *testing.T) emMessage {
	t.Helper()
	var m emMessage
	if err := json.Unmarshal(p.body, &m); err != nil {
		t.Fatalf("%s body %q: %v", p.Cmd, p.body, err)
	}
	return m
}

// TestMeshMessageAcrossTwoDaemons runs the meshmessage listener on daemon
// A of a two-daemon cluster. An EventMesh TCP client at A says HELLO,
// subscribes and listens; its ASYNC message reaches a socket client at B
// and B's event reaches it, both acknowledged; its BROADCAST reaches B and
// itself; its REQUEST is answered by an RSB server at B; it heartbeats and
// says goodbye.
func TestMeshMessageAcrossTwoDaemons(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("A", opts{args: []string{"--gateway-meshmessage", "127.0.0.1:0"}})
	b := c.start("B", opts{})
	c.waitPeers(30 * time.Second)
	addr := a.Info().MeshMessage
	if addr == "" {
		t.Fatal("A's ready file has no meshmessage address")
	}
	bl := dial(t, b, "B/listener")
	bl.listen("/robot/", "/all/")
	bp := dial(t, b, "B/publisher")

	em := dialEventMesh(t, addr)
	em.answer("HELLO_RESPONSE", em.send("HELLO_REQUEST", map[string]any{"subsystem": "5023", "purpose": "sub", "version": "2.0"}))
	em.answer("SUBSCRIBE_RESPONSE", em.send("SUBSCRIBE_REQUEST", map[string]any{"topicList": []map[string]string{
		{"topic": "/robot/", "mode": "CLUSTERING", "type": "ASYNC"}, {"topic": "/all/", "mode": "BROADCASTING", "type": "ASYNC"}}}))
	em.answer("LISTEN_RESPONSE", em.send("LISTEN_REQUEST", nil))

	// ASYNC to the server, repeated until B's listener has one (the route
	// from A to B's interest forms meanwhile); each is acknowledged.
	fromMesh := func(ev *notification.Event) bool {
		return ev.Scope.String() == "/robot/arm/" && strings.HasPrefix(string(ev.Data), "from mesh")
	}
	testutil.WaitFor(t, 30*time.Second, "B receives the EventMesh message", func() bool {
		em.answer("ASYNC_MESSAGE_TO_SERVER_ACK", em.send("ASYNC_MESSAGE_TO_SERVER",
			emMessage{Topic: "/robot/arm/", Properties: map[string]string{"color": "red"}, Body: "from mesh"}))
		return bl.count(fromMesh) > 0
	})
	if ev := bl.received(fromMesh)[0]; ev.WireSchema != schemaText {
		t.Errorf("B got wire schema %q", ev.WireSchema)
	}

	// ASYNC to the client: B publishes until the EventMesh client has it.
	got := make(chan emMessage, 1)
	testutil.WaitFor(t, 30*time.Second, "the EventMesh client receives B's event", func() bool {
		bp.publish("/robot/leg/", schemaText, []byte("from B"))
		for {
			select {
			case p := <-em.in:
				if p.Cmd != "ASYNC_MESSAGE_TO_CLIENT" {
					continue
				}
				if m := p.message(t); m.Topic == "/robot/leg/" {
					got <- m
					return true
				}
			case <-time.After(200 * time.Millisecond):
				return false
			}
		}
	})
	if m := <-got; m.Body != "from B" {
		t.Fatalf("B's event as %+v", m)
	}

	// A BROADCAST reaches B's listener and the client's BROADCASTING
	// subscription.
	// The broadcast may reach the client before its ACK.
	seq := em.send("BROADCAST_MESSAGE_TO_SERVER", emMessage{Topic: "/all/news/", Body: "everyone"})
	var ack, bc *emPackage
	em.await(30*time.Second, "the ACK and the broadcast", func(p emPackage) bool {
		switch {
		case p.Cmd == "BROADCAST_MESSAGE_TO_SERVER_ACK" && p.Seq == seq:
			ack = &p
		case p.Cmd == "BROADCAST_MESSAGE_TO_CLIENT":
			bc = &p
		}
		return ack != nil && bc != nil
	})
	if m := bc.message(t); ack.Code != 0 || m.Topic != "/all/news/" || m.Body != "everyone" {
		t.Fatalf("ACK code %d, broadcast %+v", ack.Code, m)
	}
	testutil.WaitFor(t, 30*time.Second, "B receives the broadcast", func() bool {
		return bl.count(func(ev *notification.Event) bool { return ev.Scope.String() == "/all/news/" }) > 0
	})

	testMeshRequest(t, em, b.Info().Socket)

	em.answer("HEARTBEAT_RESPONSE", em.send("HEARTBEAT_REQUEST", nil))
	if v := a.Metric(`rsbd_gateway_connections{protocol="meshmessage"}`); v != 1 {
		t.Errorf("connections %v", v)
	}
	if v := a.Metric(`rsbd_gateway_published_events_total{protocol="meshmessage"}`); v < 2 {
		t.Errorf("published %v", v)
	}
	em.answer("CLIENT_GOODBYE_RESPONSE", em.send("CLIENT_GOODBYE_REQUEST", nil))
	for range em.in {
	}
	if err := <-em.err; !errors.Is(err, io.EOF) {
		t.Fatalf("after goodbye: %v", err)
	}
}

// testMeshRequest checks the EventMesh client's REQUEST_TO_SERVER on
// /svc/echo/ is answered by an RSB server on /svc/ connected to daemon B
// at socket, as RESPONSE_TO_CLIENT with the request's seq. Requests with
// a short ttl repeat until the interest of A's caller reaches B.
func testMeshRequest(t *testing.T, em *emClient, socket string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bus, err := rsbclient.Dial(ctx, socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bus.Close() })
	srv, err := bus.NewLocalServer(scope.MustParse("/svc/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if err := srv.AddMethod("echo", func(_ context.Context, req *rsbclient.Event) (any, error) {
		return fmt.Sprintf("echo: %v", req.Payload), nil
	}); err != nil {
		t.Fatal(err)
	}
	var rsp emPackage
	testutil.WaitFor(t, 60*time.Second, "the RSB server's answer", func() bool {
		seq := em.send("REQUEST_TO_SERVER", emMessage{Topic: "/svc/echo/", Properties: map[string]string{"ttl": "2000"}, Body: "ping"})
		rsp = em.await(30*time.Second, "RESPONSE_TO_CLIENT "+seq, func(p emPackage) bool { return p.Cmd == "RESPONSE_TO_CLIENT" && p.Seq == seq })
		return rsp.Code == 0
	})
	if m := rsp.message(t); m.Topic != "/svc/echo/" || m.Body != "echo: ping" {
		t.Fatalf("response %+v", m)
	}
}
