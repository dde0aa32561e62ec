package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	rsbclient "github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/mesh/streamcall"
	"github.com/rsbd/rsbd/scope"
)

// startAgent serves, through a socket client of d, the echo agent on
// /agents/echo/ (SendMessage answers the request's text, a streamed call
// its words one chunk each) and a counter on /count/ (a streamed call of
// as many chunks as its prompt says), and on /slow/ a streamed call that
// writes one chunk and waits for its cancellation, whose cause it reports
// on the channel returned.
func startAgent(t *testing.T, d *daemon) (cancelled <-chan error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bus, err := rsbclient.Dial(ctx, "socket://"+d.Info().Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bus.Close() })
	ls, err := bus.NewLocalServer(scope.MustParse("/agents/echo/"))
	if err != nil {
		t.Fatal(err)
	}
	err = ls.AddMethod("SendMessage", func(ctx context.Context, req *rsbclient.Event) (any, error) {
		return json.Marshal(map[string]any{"kind": "message", "role": "agent", "messageId": "m",
			"parts": []any{map[string]any{"kind": "text", "text": "echo: " + a2aText(req.Data)}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	words := func(ctx context.Context, req *streamcall.Request, w *streamcall.Writer) error {
		for _, word := range strings.Fields(a2aText(req.Prompt)) {
			if err := w.Write(ctx, []byte(word)); err != nil {
				return err
			}
		}
		return nil
	}
	count := func(ctx context.Context, req *streamcall.Request, w *streamcall.Writer) error {
		n, err := strconv.Atoi(string(req.Prompt))
		for i := 0; err == nil && i < n; i++ {
			err = w.Write(ctx, []byte(strconv.Itoa(i)))
		}
		return err
	}
	causes := make(chan error, 1)
	slow := func(ctx context.Context, req *streamcall.Request, w *streamcall.Writer) error {
		if err := w.Write(ctx, []byte("first")); err != nil {
			return err
		}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil
	}
	for sc, h := range map[string]streamcall.Handler{"/agents/echo/": words, "/count/": count, "/slow/": slow} {
		s, err := streamcall.Serve(bus, scope.MustParse(sc), h, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
	}
	return causes
}

// a2aText returns the text of the first part of an A2A request.
func a2aText(raw []byte) string {
	var r struct {
		Params struct {
			Message struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &r) != nil || len(r.Params.Message.Parts) == 0 {
		return ""
	}
	return r.Params.Message.Parts[0].Text
}

// curlStream POSTs body to url with curl -N and returns the data lines of
// the SSE answer.
func curlStream(t *testing.T, curl, url, body string, headers ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := []string{"-sS", "-N", "--data-binary", "@-"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	cmd := exec.CommandContext(ctx, curl, append(args, url)...)
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl -N %s: %v", url, err)
	}
	var data []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
		}
	}
	return data
}

const (
	e2eSendV03 = `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"text","text":"hello bus"}],"messageId":"u1"}}}`
	e2eSendV10 = `{"jsonrpc":"2.0","id":"b","method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[{"text":"hello bus"}],"messageId":"u1"}}}`
)

// TestAgentsAcrossTwoDaemons runs the gateway with --gateway-a2a on daemon
// A and a test agent on daemon B: curl's message/send (A2A 0.3) and
// SendMessage (1.0) at A reach the agent and return its answer; curl's
// message/stream and SendStreamingMessage are answered over SSE word by
// word, the last event final; bad JSON-RPC gets its error while the agent
// keeps answering; a Go caller at A receives a streamed call of 1 000
// chunks from B complete and in order; curl's POST to /.stream/ gets the
// chunks as SSE events, the last of type done; a Go caller at A that
// cancels a call cancels the server's context at B.
func TestAgentsAcrossTwoDaemons(t *testing.T) {
	t.Parallel()
	curl := curlBin(t)
	c := newCluster(t)
	a := c.start("A", opts{args: []string{"--gateway-http", "127.0.0.1:0", "--gateway-a2a", "/agents/echo/"}})
	b := c.start("B", opts{})
	c.waitPeers(30 * time.Second)
	cancelled := startAgent(t, b)
	gw := "http://" + a.Info().Gateway

	// The agent at B is reachable once a call through A is answered.
	testutil.WaitFor(t, 30*time.Second, "the agent at B answers through A", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw+"/.a2a", strings.NewReader(e2eSendV03))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var r struct{ Result json.RawMessage }
		return json.NewDecoder(resp.Body).Decode(&r) == nil && r.Result != nil
	})

	for _, tc := range []struct{ path, version, body, id string }{
		{"/.a2a/agents/echo", "", e2eSendV03, "1"}, {"/.a2a", "1.0", e2eSendV10, `"b"`},
	} {
		code, reply := curlPost(t, curl, gw+tc.path, tc.body, "Content-Type: application/json", "A2A-Version: "+tc.version)
		var r struct {
			ID     json.RawMessage
			Result json.RawMessage
		}
		if err := json.Unmarshal([]byte(reply), &r); code != "200" || err != nil || string(r.ID) != tc.id ||
			!strings.Contains(string(r.Result), "echo: hello bus") {
			t.Errorf("%s %q: %s %s", tc.path, tc.version, code, reply)
		}
	}

	for _, tc := range []struct{ version, method, final string }{
		{"", "message/stream", `"state":"completed"`}, {"1.0", "SendStreamingMessage", `"state":"TASK_STATE_COMPLETED"`},
	} {
		body := e2eSendV03
		if tc.version != "" {
			body = e2eSendV10
		}
		body = strings.Replace(strings.Replace(body, "message/send", tc.method, 1), "SendMessage", tc.method, 1)
		data := curlStream(t, curl, gw+"/.a2a/agents/echo", body, "A2A-Version: "+tc.version)
		if len(data) != 3 || !strings.Contains(data[0], `"hello"`) || !strings.Contains(data[1], `"bus"`) ||
			!strings.Contains(data[2], tc.final) || !strings.Contains(data[2], `"final":true`) {
			t.Errorf("%s: %q", tc.method, data)
		}
	}

	code, reply := curlPost(t, curl, gw+"/.a2a", `{"jsonrpc":"2.0","id":9,"method":"message/send"`)
	if code != "200" || !strings.Contains(reply, `"code":-32700`) {
		t.Errorf("bad JSON: %s %s", code, reply)
	}
	code, reply = curlPost(t, curl, gw+"/.a2a", e2eSendV03, "A2A-Version: 1.0")
	if code != "200" || !strings.Contains(reply, `"code":-32601`) {
		t.Errorf("0.3 name under 1.0: %s %s", code, reply)
	}
	if code, reply = curlPost(t, curl, gw+"/.a2a", e2eSendV03); code != "200" || !strings.Contains(reply, "echo: hello bus") {
		t.Errorf("after bad requests: %s %s", code, reply)
	}

	checkThousandChunks(t, a)
	checkCancel(t, a, cancelled)

	data := curlStream(t, curl, gw+"/.stream/count/?timeout=20s", "3")
	if strings.Join(data, ",") != "0,1,2," {
		t.Errorf("stream over HTTP: %q", data)
	}
	if m := a.Metric(`rsbd_gateway_published_events_total{protocol="a2a"}`); m < 6 {
		t.Errorf("a2a published %v", m)
	}
}

// checkCancel opens a call to /slow/ from a Go caller at d, cancels it
// after the first chunk and checks the server's context is cancelled by
// the caller.
func checkCancel(t *testing.T, d *daemon, cancelled <-chan error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bus, err := rsbclient.Dial(ctx, "socket://"+d.Info().Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	callCtx, cancelCall := context.WithCancel(ctx)
	s, err := streamcall.Call(callCtx, bus, scope.MustParse("/slow/"), streamcall.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ch, err := s.Recv(); err != nil || string(ch.Data) != "first" {
		t.Fatalf("first chunk %q %v", ch.Data, err)
	}
	cancelCall()
	select {
	case cause := <-cancelled:
		if !errors.Is(cause, streamcall.ErrCancelled) {
			t.Errorf("server's cause %v", cause)
		}
	case <-ctx.Done():
		t.Error("the caller's cancel never reached the server")
	}
}

// checkThousandChunks calls /count/ from a Go caller at d for 1 000 chunks
// and checks they arrive complete and in order.
func checkThousandChunks(t *testing.T, d *daemon) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bus, err := rsbclient.Dial(ctx, "socket://"+d.Info().Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	s, err := streamcall.Call(ctx, bus, scope.MustParse("/count/"), streamcall.Request{Prompt: []byte("1000")})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ch, err := range s.Chunks() {
		if err != nil {
			t.Fatalf("after %d chunks: %v", n, err)
		}
		if ch.Done {
			break
		}
		if string(ch.Data) != fmt.Sprint(n) {
			t.Fatalf("chunk %d is %q", n, ch.Data)
		}
		n++
	}
	if n != 1000 {
		t.Fatalf("%d chunks", n)
	}
}
