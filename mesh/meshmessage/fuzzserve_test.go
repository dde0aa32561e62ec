package meshmessage

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/node"
)

// seedSession returns the Packages of a session as one byte stream:
// HELLO, a SYNC and an ASYNC subscription, LISTEN, a message, a request,
// a response nobody waits for, a heartbeat and goodbye.
func seedSession(t testing.TB) []byte {
	var out []byte
	for _, p := range []*Package{
		{Header: Header{Command: HelloRequest, Seq: "1"}, Body: []byte(`{"token":"t","subsystem":"5023"}`)},
		{Header: Header{Command: SubscribeRequest, Seq: "2"}, Body: []byte(`{"topicList":[{"topic":"/f/m/","type":"SYNC"},{"topic":"/f/","mode":"BROADCASTING"}]}`)},
		{Header: Header{Command: ListenRequest, Seq: "3"}},
		{Header: Header{Command: AsyncMessageToServer, Seq: "4"}, Body: []byte(`{"topic":"/f/x/","properties":{"ttl":"5"},"body":"b"}`)},
		{Header: Header{Command: RequestToServer, Seq: "5"}, Body: []byte(`{"topic":"/f/m/","properties":{"ttl":"50"},"body":"q"}`)},
		{Header: Header{Command: ResponseToServer, Seq: "6"}, Body: []byte(`{"topic":"/f/m/","properties":{"emcorrelationid":"rsbd-1"},"body":"r"}`)},
		{Header: Header{Command: HeartbeatRequest, Seq: "7"}},
		{Header: Header{Command: UnsubscribeRequest, Seq: "8"}, Body: []byte(`{"topicList":[{"topic":"/f/"}]}`)},
		{Header: Header{Command: ClientGoodbyeRequest, Seq: "9"}},
	} {
		b, err := Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

// FuzzServe feeds a byte stream to a listener's connection: whatever it
// holds, the listener never panics and the connection ends once the
// client closes its side. Each run costs a connection on a node, so
// minimizing a new input takes long: run it with -fuzzminimizetime 3s.
func FuzzServe(f *testing.F) {
	f.Add(seedSession(f))
	for name := range goldens {
		f.Add(testutil.GoldenHex(&testing.T{}, name))
	}
	f.Add([]byte("EventMesh0000\x00\x00\x00\x0d\x00\x00\x00\x00"))
	// Nothing logs: a fuzzing worker's output is a pipe, and the warnings
	// of thousands of subscriptions to random scopes would fill it and
	// stall the worker.
	quiet := slog.New(slog.DiscardHandler)
	n := clienttest.StartNodesWith(f, 1, func(_ int, c *node.Config) { c.Logger = quiet })[0]
	bus, err := client.EmbeddedConfig(n, client.Config{Logger: quiet})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = bus.Close() })
	s, err := New(bus, Config{RequestTimeout: 50 * time.Millisecond, HeartbeatTimeout: 5 * time.Second, Logger: quiet})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = s.Close() })
	f.Fuzz(func(t *testing.T, b []byte) {
		cl, sv := net.Pipe()
		c := s.start(sv)
		if c == nil {
			t.Fatal("connection refused")
		}
		go func() { _, _ = io.Copy(io.Discard, cl) }()
		_ = cl.SetWriteDeadline(time.Now().Add(2 * time.Second))
		_, _ = cl.Write(b)
		_ = cl.Close()
		select {
		case <-c.done:
		case <-time.After(4 * time.Second):
			t.Fatal("the connection did not end after the client closed")
		}
	})
}
