package cloudevents

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// publishBytes publishes an RSB event of schema with data on sc through
// e's bus.
func (e *env) publishBytes(t *testing.T, sc, schema string, data []byte) {
	t.Helper()
	inf, err := e.bus.NewInformer(scope.MustParse(sc))
	if err != nil {
		t.Fatal(err)
	}
	defer inf.Close()
	ev := &client.Event{Event: notification.Event{WireSchema: schema, Data: data}}
	if err := inf.PublishEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
}

func TestRawAppendSSE(t *testing.T) {
	text := outgoing{id: "1", json: []byte("a\r\nb"), text: true}
	if got, want := string(formatRaw.appendSSE(nil, text)), "id: 1\ndata: a\ndata: b\n\n"; got != want {
		t.Errorf("text: got %q want %q", got, want)
	}
	bin := outgoing{id: "2", json: []byte{0xff, 0x00, 0x01}}
	if got, want := string(formatRaw.appendSSE(nil, bin)), "id: 2\nevent: base64\ndata: /wAB\n\n"; got != want {
		t.Errorf("bytes: got %q want %q", got, want)
	}
}

func TestRawWebSocket(t *testing.T) {
	e := start(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	url := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/raw/?format=raw"
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	e.waitSubscribers(t, 1)
	e.publishBytes(t, "/raw/", "utf-8-string", []byte("héllo"))
	e.publishBytes(t, "/raw/", "bytes", []byte{0xff, 0xfe})
	for _, want := range []struct {
		typ  websocket.MessageType
		data string
	}{{websocket.MessageText, "héllo"}, {websocket.MessageBinary, "\xff\xfe"}} {
		typ, msg, err := c.Read(ctx)
		if err != nil || typ != want.typ || string(msg) != want.data {
			t.Errorf("got %v %q %v, want %v %q", typ, msg, err, want.typ, want.data)
		}
	}
}

func TestRawSSE(t *testing.T) {
	e := start(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/raw/?format=raw", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	e.waitSubscribers(t, 1)
	e.publishBytes(t, "/raw/", "bytes", []byte{0xff, 0x00, 0x01})
	want := "event: base64\ndata: /wAB\n\n"
	var got []byte
	buf := make([]byte, 4096)
	for !strings.Contains(string(got), want) {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("stream %q: %v", got, err)
		}
	}
}

func TestUnknownFormat(t *testing.T) {
	e := start(t, Config{})
	resp, err := http.Get(e.srv.URL + "/raw/?format=xml")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || e.g.Stats().Rejected["out_format"] != 1 {
		t.Errorf("status %d, rejected %v", resp.StatusCode, e.g.Stats().Rejected)
	}
}
