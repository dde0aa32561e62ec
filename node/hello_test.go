package node

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
	"github.com/rsbd/rsbd/scope"
)

// helloBody is an introspection Hello announcing a listener on sc.
func helloBody(t testing.TB, i int, sc string) []byte {
	t.Helper()
	id := notification.NewParticipantID()
	data, err := (proto.MarshalOptions{AllowPartial: true}).Marshal(&introspection.Hello{Id: id[:], Kind: proto.String("listener"), Scope: proto.String(sc)})
	if err != nil {
		t.Fatal(err)
	}
	ev := &notification.Event{
		Scope:      scope.MustParse(fmt.Sprintf("/__rsb/introspection/participants/%x/", id)),
		WireSchema: rsbsocket.HelloWireSchema, Data: data,
		ID: notification.EventID{SenderID: id, SequenceNumber: uint32(i)},
	}
	body, err := notification.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// dialSocket connects an RSB socket client to n, closed when the test ends.
func dialSocket(t testing.TB, n *Node) *sockclient.ClientConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := sockclient.Dial(ctx, n.SocketAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestManyHellosAcrossNodes: a socket client announcing thousands of
// listeners in one burst gets them known to the peers (the last one
// receives an event from the other node), in far fewer interest barriers
// than Hellos.
func TestManyHellosAcrossNodes(t *testing.T) {
	const n = 2000
	nodes := startNodes(t, 2, func(_ int, c *Config) { c.Socket.MaxParticipants = n })
	a, b := nodes[0], nodes[1]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := dialSocket(t, a)
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = helloBody(t, i, fmt.Sprintf("/hello/%d/", i))
	}
	start := time.Now()
	for len(bodies) > 0 {
		k := min(len(bodies), 128)
		if err := c.SendMany(bodies[:k]); err != nil {
			t.Fatal(err)
		}
		bodies = bodies[k:]
	}
	last := scope.MustParse(fmt.Sprintf("/hello/%d/", n-1))
	testutil.WaitFor(t, 10*time.Second, "the last listener known to the peer", func() bool {
		return b.interest().Wanted(groupID(last.String())) && a.SocketInterest().Matches(last)
	})
	if err := b.Publish(ctx, testutil.Event(last.String(), 1, []byte("x"))); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	for {
		body, err := c.Recv()
		if err != nil {
			t.Fatalf("no event on the last listener's scope: %v", err)
		}
		if f, err := frame.ParseFrame(body); err == nil && f.Scope == last {
			break
		}
	}
	t.Logf("%d Hellos known across nodes and an event received after %v", n, time.Since(start))
}

// TestSocketEventsRetained: events a socket client publishes reach an
// embedded subscription of its node decoded from the frame (Data aliases
// the frame body); kept events stay intact while more frames arrive.
func TestSocketEventsRetained(t *testing.T) {
	a := startNodes(t, 1, nil)[0]
	var got collector
	defer a.Subscribe(scope.MustParse("/keep/"), got.handle)()
	c := dialSocket(t, a)
	const n = 500
	want := make([][]byte, n)
	for i := range want {
		want[i] = bytes.Repeat([]byte{byte(i)}, 100+i)
		body, err := notification.Marshal(testutil.Event("/keep/x/", uint32(i), want[i]))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Send(body); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 10*time.Second, "every event", func() bool { return got.len() == n })
	for i := range n {
		if ev := got.get(i); !bytes.Equal(ev.Data, want[i]) {
			t.Fatalf("event %d changed after delivery", i)
		}
	}
}
