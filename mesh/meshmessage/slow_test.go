package meshmessage

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// smallBuffer accepts its first connection with a small send buffer, so
// that client, if it stops reading, stalls the server's writes soon; the
// others keep the usual buffers, as tiny windows slow a reading client
// too.
type smallBuffer struct {
	net.Listener
	accepted atomic.Int32
}

func (l *smallBuffer) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if tc, ok := nc.(*net.TCPConn); ok && l.accepted.Add(1) == 1 {
		_ = tc.SetWriteBuffer(4096)
	}
	return nc, err
}

// TestSlowClient checks a client that stops reading is closed once a
// write takes longer than WriteTimeout, counted as slow, while another
// client keeps receiving; and a connection past MaxClients is refused.
func TestSlowClient(t *testing.T) {
	n := clienttest.StartNodes(t, 1)[0]
	bus := client.Embedded(n)
	t.Cleanup(func() { _ = bus.Close() })
	s, err := New(bus, Config{WriteTimeout: time.Second, MaxClients: 2, Logger: clienttest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(&smallBuffer{Listener: ln}) }()
	t.Cleanup(func() { _ = s.Close() })
	addr := ln.Addr().String()

	var clients [2]*testClient
	for i := range clients {
		c := dial(t, addr)
		if tc, ok := c.nc.(*net.TCPConn); ok && i == 0 {
			_ = tc.SetReadBuffer(4096)
		}
		c.write("SUBSCRIBE_REQUEST", "1", Subscription{Topics: []SubscriptionItem{{Topic: "/flood/"}}})
		c.expect("SUBSCRIBE_RESPONSE")
		c.write("LISTEN_REQUEST", "2", nil)
		c.expect("LISTEN_RESPONSE")
		clients[i] = c
	}
	third := dial(t, addr)
	third.closed()

	inf, err := bus.NewInformer(scope.MustParse("/flood/"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	big := strings.Repeat("x", 64<<10)
	reader := clients[1]
	testutil.WaitFor(t, 30*time.Second, "the slow client closed", func() bool {
		if _, err := inf.Publish(ctx, big); err != nil {
			t.Fatal(err)
		}
		reader.expect("ASYNC_MESSAGE_TO_CLIENT")
		return s.Stats().Closed[CloseSlow] == 1
	})
	if _, err := inf.Publish(ctx, "after"); err != nil {
		t.Fatal(err)
	}
	for {
		if m := message(t, reader.expect("ASYNC_MESSAGE_TO_CLIENT")["ASYNC_MESSAGE_TO_CLIENT"]); m.Body == "after" {
			break
		}
	}
	st := s.Stats()
	if st.Rejected[RejectClients] != 1 || st.Connections != 1 || st.Subscribers != 1 {
		t.Fatalf("stats %+v", st)
	}
}
