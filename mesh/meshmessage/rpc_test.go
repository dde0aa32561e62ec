package meshmessage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// TestRequestToServer checks REQUEST_TO_SERVER calls the RSB method its
// topic names and RESPONSE_TO_CLIENT carries the reply, an error reply,
// the lack of one within the message's ttl, or a topic naming no method.
func TestRequestToServer(t *testing.T) {
	s, bus, addr := startServer(t, Config{})
	srv, err := bus.NewLocalServer(scope.MustParse("/svc/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if err := srv.AddMethod("echo", func(_ context.Context, req *client.Event) (any, error) {
		return fmt.Sprintf("echo: %v", req.Payload), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddMethod("fail", func(context.Context, *client.Event) (any, error) {
		return nil, errors.New("out of order")
	}); err != nil {
		t.Fatal(err)
	}
	c := dial(t, addr)
	c.write("HELLO_REQUEST", "1", nil)
	c.expect("HELLO_RESPONSE")

	c.write("REQUEST_TO_SERVER", "7", Message{Topic: "/svc/echo/", Body: "ping"})
	h, body := c.response("RESPONSE_TO_CLIENT")
	if m := message(t, body); h.Seq != "7" || h.Code != 0 || m.Topic != "/svc/echo/" || m.Body != "echo: ping" {
		t.Fatalf("response %+v %+v", h, m)
	}
	c.write("REQUEST_TO_SERVER", "8", Message{Topic: "/svc/fail/", Body: "x"})
	if h, _ := c.response("RESPONSE_TO_CLIENT"); h.Seq != "8" || h.Code != CodeFail || !strings.Contains(h.Desc, "out of order") {
		t.Fatalf("error reply %+v", h)
	}
	start := time.Now()
	c.write("REQUEST_TO_SERVER", "9", Message{Topic: "/svc/none/", Properties: map[string]string{"ttl": "300"}, Body: "x"})
	if h, _ := c.response("RESPONSE_TO_CLIENT"); h.Seq != "9" || h.Code != CodeFail || !strings.Contains(h.Desc, ErrNoResponse.Error()) {
		t.Fatalf("unanswered request %+v", h)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("unanswered request failed after %v, before its ttl", d)
	}
	for seq, m := range map[string]Message{"10": {Topic: "/", Body: "x"}, "11": {Topic: "/svc/echo/", Properties: map[string]string{"ttl": "soon"}}} {
		c.write("REQUEST_TO_SERVER", seq, m)
		if h, _ := c.response("RESPONSE_TO_CLIENT"); h.Seq != seq || h.Code != CodeFail {
			t.Fatalf("request %+v: %+v", m, h)
		}
	}
	st := s.Stats()
	if st.Dropped[DropNoResponse] != 1 || st.Rejected[RejectMalformed] != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestRequestToClient checks an RSB call of the method a SYNC
// subscription serves reaches the client as REQUEST_TO_CLIENT and its
// RESPONSE_TO_SERVER returns: by seq, by emcorrelationid, as a failure,
// or not in time.
func TestRequestToClient(t *testing.T) {
	s, bus, addr := startServer(t, Config{RequestTimeout: 2 * time.Second})
	c := dial(t, addr)
	c.write("HELLO_REQUEST", "1", nil)
	c.expect("HELLO_RESPONSE")
	c.write("SUBSCRIBE_REQUEST", "2", Subscription{Topics: []SubscriptionItem{{Topic: "/calc/double/", Type: "SYNC"}}})
	c.expect("SUBSCRIBE_RESPONSE")
	rs, err := bus.NewRemoteServer(scope.MustParse("/calc/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rs.Close() })

	type result struct {
		v   any
		err error
	}
	call := func(arg string) chan result {
		ch := make(chan result, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			v, err := rs.Call(ctx, "double", arg)
			ch <- result{v, err}
		}()
		return ch
	}
	answer := func(h map[string]any, body any) {
		h["cmd"] = "RESPONSE_TO_SERVER"
		c.writeHeader(h, body)
	}
	for i, reply := range []func(seq, corr string){
		func(seq, _ string) { answer(map[string]any{"seq": seq}, Message{Topic: "/calc/double/", Body: "42"}) },
		func(_, corr string) {
			answer(map[string]any{"seq": "other"}, Message{Topic: "/calc/double/", Properties: map[string]string{"emcorrelationid": corr}, Body: "42"})
		},
		func(seq, _ string) { answer(map[string]any{"seq": seq, "code": 1, "desc": "cannot"}, nil) },
	} {
		done := call("21")
		h, body := c.response("REQUEST_TO_CLIENT")
		m := message(t, body)
		if m.Topic != "/calc/double/" || m.Body != "21" || m.Properties[AttrCorrelationID] != h.Seq {
			t.Fatalf("request %+v %+v", h, m)
		}
		reply(h.Seq, m.Properties[AttrCorrelationID])
		r := <-done
		switch i {
		case 0, 1:
			if r.err != nil || r.v != "42" {
				t.Fatalf("call %d: %v, %v", i, r.v, r.err)
			}
		case 2:
			if !errors.Is(r.err, client.ErrRemote) || !strings.Contains(r.err.Error(), "cannot") {
				t.Fatalf("failed response: %v", r.err)
			}
		}
	}
	done := call("21")
	c.response("REQUEST_TO_CLIENT")
	if r := <-done; !errors.Is(r.err, client.ErrRemote) || !strings.Contains(r.err.Error(), ErrNoResponse.Error()) {
		t.Fatalf("unanswered: %v", r.err)
	}
	c.write("RESPONSE_TO_SERVER", "late", Message{Topic: "/calc/double/", Body: "42"})
	c.write("HEARTBEAT_REQUEST", "3", nil)
	c.expect("HEARTBEAT_RESPONSE")
	st := s.Stats()
	if st.Dropped[DropNoResponse] != 1 || st.Rejected[RejectUnknownResponse] != 1 {
		t.Fatalf("stats %+v", st)
	}
	c.write("UNSUBSCRIBE_REQUEST", "4", Subscription{Topics: []SubscriptionItem{{Topic: "/calc/double/"}}})
	c.expect("UNSUBSCRIBE_RESPONSE")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := rs.Call(ctx, "double", "1"); !errors.Is(err, client.ErrTimeout) {
		t.Fatalf("call after UNSUBSCRIBE: %v", err)
	}
	testutil.WaitFor(t, 10*time.Second, "the pending map empty", func() bool {
		c := anyConn(s)
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.pending) == 0
	})
}

// anyConn returns one of the Server's connections.
func anyConn(s *Server) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		return c
	}
	return nil
}

// TestRequestBound checks a request past MaxRequests gets CodeOverload at
// once while the first waits for its answer.
func TestRequestBound(t *testing.T) {
	s, bus, addr := startServer(t, Config{MaxRequests: 1})
	srv, err := bus.NewLocalServer(scope.MustParse("/slow/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	release := make(chan struct{})
	if err := srv.AddMethod("wait", func(ctx context.Context, _ *client.Event) (any, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "done", nil
	}); err != nil {
		t.Fatal(err)
	}
	c := dial(t, addr)
	c.write("REQUEST_TO_SERVER", "1", Message{Topic: "/slow/wait/", Body: "a"})
	testutil.WaitFor(t, 10*time.Second, "the first request in flight", func() bool {
		c := anyConn(s)
		return c != nil && len(c.calls) == 1
	})
	c.write("REQUEST_TO_SERVER", "2", Message{Topic: "/slow/wait/", Body: "b"})
	if h, _ := c.response("RESPONSE_TO_CLIENT"); h.Seq != "2" || h.Code != CodeOverload {
		t.Fatalf("second request %+v", h)
	}
	close(release)
	if h, body := c.response("RESPONSE_TO_CLIENT"); h.Seq != "1" || h.Code != 0 || message(t, body).Body != "done" {
		t.Fatalf("first request %+v %s", h, body)
	}
	if n := s.Stats().Rejected[RejectRequests]; n != 1 {
		t.Fatalf("rejected requests %d", n)
	}
}
