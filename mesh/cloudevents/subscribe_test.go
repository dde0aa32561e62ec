package cloudevents

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/cloudevent/filter"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// publishRSB publishes an RSB event on sc through e's bus, as an RSB
// participant would, and returns it.
func (e *env) publishRSB(t *testing.T, sc string, data string) *client.Event {
	t.Helper()
	inf, err := e.bus.NewInformer(scope.MustParse(sc))
	if err != nil {
		t.Fatal(err)
	}
	defer inf.Close()
	ev := &client.Event{Event: notification.Event{Method: "REQUEST", WireSchema: "utf-8-string", Data: []byte(data)}}
	ev.MetaData.SetUserInfo("rsb:error?", "line one\nline two")
	if err := inf.PublishEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// checkMapped checks a CloudEvent received from the gateway is the RSB
// event ev.
func checkMapped(t *testing.T, ce *cloudevent.Event, ev *client.Event) {
	t.Helper()
	back, err := ce.ToRSB()
	if err != nil {
		t.Fatal(err)
	}
	if back.Scope != ev.Scope || back.ID != ev.ID || back.Method != "REQUEST" || string(back.Data) != string(ev.Data) ||
		back.WireSchema != "utf-8-string" || ce.Extensions[cloudevent.ExtMethod] != "REQUEST" {
		t.Errorf("received %+v\nfor %+v", ce, ev.Event)
	}
	if v, _ := back.MetaData.UserInfo("rsb:error?"); v != "line one\nline two" {
		t.Errorf("user info %q", v)
	}
}

func TestCurlSubscribesBySSE(t *testing.T) {
	e := start(t, Config{})
	// The deadline ends curl, and so the read below, if the event is lost.
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, curl(t), "-sN", e.srv.URL+"/robot/")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	e.waitSubscribers(t, 1)
	e.publishRSB(t, "/other/", "not for this subscriber")
	ev := e.publishRSB(t, "/robot/arm/", "hello")

	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 1<<20)
	var id, data string
	for data == "" && lines.Scan() {
		line := lines.Text()
		if v, ok := strings.CutPrefix(line, "id: "); ok {
			id = v
		} else if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = v
		}
	}
	ce, err := cloudevent.Unmarshal([]byte(data))
	if err != nil {
		t.Fatalf("SSE data %q: %v", data, err)
	}
	if id != ce.ID || ce.Subject != "/robot/arm/" {
		t.Errorf("id %q, event %+v", id, ce)
	}
	checkMapped(t, ce, ev)
}

func TestWebSocket(t *testing.T) {
	e := start(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	url := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/robot/"
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if c.Subprotocol() != Subprotocol {
		t.Fatalf("subprotocol %q", c.Subprotocol())
	}
	e.waitSubscribers(t, 1)

	ev := e.publishRSB(t, "/robot/leg/", "to the browser")
	typ, msg, err := c.Read(ctx)
	if err != nil || typ != websocket.MessageText {
		t.Fatalf("read: %v %v", typ, err)
	}
	ce, err := cloudevent.Unmarshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	checkMapped(t, ce, ev)

	rd := e.reader(t, "/robot/ws/")
	in := `{"specversion":"1.0","id":"w1","source":"/browser","type":"t","subject":"/robot/ws/","datacontenttype":"text/plain","data":"from the browser"}`
	if err := c.Write(ctx, websocket.MessageText, []byte(in)); err != nil {
		t.Fatal(err)
	}
	got := read(t, rd)
	if string(got.Data) != "from the browser" || userInfo(t, got, "ce:id") != "w1" {
		t.Errorf("published %+v", got.Event)
	}
	// The gateway's own event comes back to the subscriber too, as to any
	// listener on its scope.
	if _, msg, err = c.Read(ctx); err != nil || !strings.Contains(string(msg), "from the browser") {
		t.Errorf("echo: %s %v", msg, err)
	}
	// A bad message is refused and counted; the connection stays.
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"oops"`)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, waitTimeout, "bad message counted", func() bool { return e.g.Stats().Rejected["malformed"] == 1 })
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	e.waitSubscribers(t, 0)
}

func TestWebSocketNeedsSubprotocol(t *testing.T) {
	e := start(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.srv.URL, "http")+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	_, _, err = c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("read: %v", err)
	}
	if e.g.Stats().Rejected["subprotocol"] != 1 {
		t.Errorf("stats %+v", e.g.Stats())
	}
}

// TestSlowSubscriberDrops checks a subscriber's queue is bounded: what
// does not fit is dropped and counted.
func TestSlowSubscriberDrops(t *testing.T) {
	e := start(t, Config{QueueLen: 2})
	s, err := e.g.subscribe(scope.MustParse("/slow/"), filter.Filter{}, formatCloudEvents)
	if err != nil {
		t.Fatal(err)
	}
	defer e.g.closeSubscription(s)
	for range 5 {
		e.publishRSB(t, "/slow/", "x")
	}
	testutil.WaitFor(t, waitTimeout, "three drops", func() bool { return e.g.Stats().Dropped == 3 })
	if len(s.q) != 2 {
		t.Errorf("queue holds %d", len(s.q))
	}
}

func TestGatewayClose(t *testing.T) {
	e := start(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.srv.URL, "http")+"/", &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	e.waitSubscribers(t, 1)
	if err := e.g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("read after Close: %v", err)
	}
	if status, _ := e.post(t, "/a/", "", "", nil); status != 503 {
		t.Errorf("publish after Close: %d", status)
	}
	if err := e.g.Close(); err != nil && !errors.Is(err, client.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
}

func TestAppendSSE(t *testing.T) {
	o := outgoing{id: "7", json: []byte("{\"data\":{\r\n\"a\":1,\r\"b\":\n2}}")}
	want := "id: 7\ndata: {\"data\":{\ndata: \"a\":1,\ndata: \"b\":\ndata: 2}}\n\n"
	if got := string(appendSSE(nil, o)); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestQueueBytesBound(t *testing.T) {
	s := &subscription{q: make(chan outgoing, 10)}
	big := outgoing{json: make([]byte, 100)}
	if !s.offer(big, 50) {
		t.Fatal("an event over the bound must pass an empty queue")
	}
	if s.offer(outgoing{json: make([]byte, 1)}, 50) {
		t.Fatal("queue over its byte bound took another event")
	}
	s.take(<-s.q)
	if s.bytes.Load() != 0 || !s.offer(outgoing{json: make([]byte, 30)}, 50) || s.offer(outgoing{json: make([]byte, 30)}, 50) {
		t.Errorf("bytes %d", s.bytes.Load())
	}
}

func TestMaxSubscribers(t *testing.T) {
	e := start(t, Config{MaxSubscribers: 1})
	s, err := e.g.subscribe(scope.MustParse("/"), filter.Filter{}, formatCloudEvents)
	if err != nil {
		t.Fatal(err)
	}
	defer e.g.closeSubscription(s)
	resp, err := http.Get(e.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || e.g.Stats().Rejected["subscribers"] != 1 {
		t.Errorf("status %d, stats %+v", resp.StatusCode, e.g.Stats())
	}
}
