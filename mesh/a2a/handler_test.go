package a2a

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/mesh/streamcall"
	"github.com/rsbd/rsbd/scope"
)

// testAgent serves the A2A operations of an echo agent on sc: SendMessage
// answers a message repeating the request's text, GetTask fails, and a
// streamed call answers the words of the text one chunk each.
func testAgent(t testing.TB, bus *client.Bus, sc string) {
	t.Helper()
	srv, err := bus.NewLocalServer(scope.MustParse(sc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	err = srv.AddMethod("SendMessage", func(ctx context.Context, req *client.Event) (any, error) {
		text, err := requestText(req.Data)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"kind": "message", "role": "agent", "messageId": "m-1",
			"parts": []any{map[string]any{"kind": "text", "text": "echo: " + text}}})
	})
	if err == nil {
		err = srv.AddMethod("GetTask", func(ctx context.Context, req *client.Event) (any, error) {
			return nil, errors.New("no tasks kept")
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	ss, err := streamcall.Serve(bus, scope.MustParse(sc), func(ctx context.Context, req *streamcall.Request, w *streamcall.Writer) error {
		text, err := requestText(req.Prompt)
		if err != nil {
			return err
		}
		for i, word := range strings.Fields(text) {
			if i > 0 {
				word = " " + word
			}
			if err := w.Write(ctx, []byte(word)); err != nil {
				return err
			}
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
}

// requestText returns the text of the first part of a request's message,
// in either version's form.
func requestText(raw []byte) (string, error) {
	var r struct {
		Params struct {
			Message struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"params"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Params.Message.Parts) == 0 {
		return "", fmt.Errorf("no message in %q", raw)
	}
	return r.Params.Message.Parts[0].Text, nil
}

// env is a Handler on an embedded node with the echo agent on
// /agents/echo/, served by an httptest server.
type env struct {
	h   *Handler
	srv *httptest.Server
	bus *client.Bus
}

func start(t *testing.T, cfg Config) *env {
	t.Helper()
	bus := client.Embedded(clienttest.StartNodes(t, 1)[0])
	t.Cleanup(func() { _ = bus.Close() })
	testAgent(t, bus, "/agents/echo/")
	h, err := New(bus, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); _ = h.Close() })
	return &env{h, srv, bus}
}

// post sends body to path with the A2A-Version header (none for "") and
// returns the status and the body.
func (e *env) post(t *testing.T, path, version, body string, headers ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set(VersionHeader, version)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, reply := testutil.Do(t, http.DefaultClient, req)
	return resp.StatusCode, reply
}

// rpcReply is a JSON-RPC response as the tests read it.
type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *Error          `json:"error"`
}

func parseReply(t *testing.T, body string) rpcReply {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.JSONRPC != "2.0" {
		t.Fatalf("not a JSON-RPC response: %q (%v)", body, err)
	}
	return r
}

const (
	sendV03 = `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"text","text":"hi there"}],"messageId":"u1"}}}`
	sendV10 = `{"jsonrpc":"2.0","id":"a","method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[{"text":"hi there"}],"messageId":"u1"}}}`
)

// TestSendMessage: message/send (0.3) and SendMessage (1.0) reach the agent
// on the bus and its answer comes back as the result, with the request's
// id; the default agent takes a request to the prefix alone.
func TestSendMessage(t *testing.T) {
	e := start(t, Config{DefaultAgent: "/agents/echo/"})
	for _, tc := range []struct{ path, version, body, id string }{
		{"/.a2a/agents/echo", "", sendV03, "1"},
		{"/.a2a/agents/echo/", "0.3", sendV03, "1"},
		{"/.a2a/agents/echo", "1.0", sendV10, `"a"`},
		{"/.a2a", "1.0", sendV10, `"a"`},
	} {
		code, body := e.post(t, tc.path, tc.version, tc.body)
		r := parseReply(t, body)
		if code != 200 || r.Error != nil || string(r.ID) != tc.id || !strings.Contains(string(r.Result), `"echo: hi there"`) {
			t.Errorf("%s %s: %d %s", tc.path, tc.version, code, body)
		}
	}
	if n := e.h.Counters().Stats().Published; n != 4 {
		t.Errorf("published %d", n)
	}
}

// TestBadRequests: bad JSON-RPC gets the error its kind defines, and a good
// request after them is served as before.
func TestBadRequests(t *testing.T) {
	e := start(t, Config{})
	for _, tc := range []struct {
		version, body string
		code          int
		reason        string
	}{
		{"", `{"jsonrpc":"2.0",`, CodeParseError, reasonParse},
		{"", `[]`, CodeInvalidRequest, reasonInvalid},
		{"", `{"jsonrpc":"2.0","method":"message/send","params":{}}`, CodeInvalidRequest, reasonInvalid},
		{"", `{"jsonrpc":"2.0","id":1,"result":{}}`, CodeInvalidRequest, reasonInvalid},
		{"", `{"jsonrpc":"2.0","id":1,"method":"message/fly","params":{}}`, CodeMethodNotFound, reasonMethod},
		{"", sendV10, CodeMethodNotFound, reasonMethod},
		{"1.0", sendV03, CodeMethodNotFound, reasonMethod},
		{"", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":[1]}`, CodeInvalidParams, reasonParams},
		{"", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"parts":[]}}}`, CodeInvalidParams, reasonParams},
		{"9.9", sendV03, CodeVersionNotSupported, reasonVersion},
	} {
		code, body := e.post(t, "/.a2a/agents/echo", tc.version, tc.body)
		r := parseReply(t, body)
		if code != 200 || r.Error == nil || r.Error.Code != tc.code {
			t.Errorf("%s: %d %s, want error %d", tc.body, code, body, tc.code)
		}
	}
	code, body := e.post(t, "/.a2a/agents/echo", "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"x":"`+
		strings.Repeat("y", MaxMessageBytes)+`"}}`)
	if r := parseReply(t, body); code != http.StatusRequestEntityTooLarge || r.Error.Code != CodeInvalidRequest {
		t.Errorf("oversize: %d %s", code, body)
	}
	if code, body := e.post(t, "/.a2a", "", sendV03); code != http.StatusNotFound {
		t.Errorf("no agent: %d %s", code, body)
	}
	if code, body := e.post(t, "/.a2a/__rsb/introspection", "", sendV03); code != http.StatusNotFound {
		t.Errorf("reserved scope: %d %s", code, body)
	}
	code, body = e.post(t, "/.a2a/agents/echo", "", sendV03)
	if r := parseReply(t, body); code != 200 || r.Error != nil {
		t.Errorf("after the bad requests: %d %s", code, body)
	}
	st := e.h.Counters().Stats()
	if st.Rejected[reasonParse] != 1 || st.Rejected[reasonInvalid] != 3 || st.Rejected[reasonMethod] != 3 ||
		st.Rejected[reasonParams] != 2 || st.Rejected[reasonVersion] != 1 || st.Rejected[reasonTooLarge] != 1 {
		t.Errorf("rejected %v", st.Rejected)
	}
}

// TestAgentErrors: an agent's error reply is -32603 with its message; an
// operation no agent answers times out as -32603.
func TestAgentErrors(t *testing.T) {
	e := start(t, Config{CallTimeout: 500 * time.Millisecond})
	_, body := e.post(t, "/.a2a/agents/echo", "", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"t"}}`)
	if r := parseReply(t, body); r.Error == nil || r.Error.Code != CodeInternalError || !strings.Contains(r.Error.Message, "no tasks kept") {
		t.Errorf("agent error: %s", body)
	}
	_, body = e.post(t, "/.a2a/agents/none", "", sendV03)
	if r := parseReply(t, body); r.Error == nil || r.Error.Code != CodeInternalError || string(r.ID) != "1" {
		t.Errorf("no agent: %s", body)
	}
	_, body = e.post(t, "/.a2a/agents/none", "", strings.Replace(sendV03, "message/send", "message/stream", 1))
	if data, ok := strings.CutPrefix(strings.TrimSpace(body[strings.Index(body, "data: "):]), "data: "); !ok ||
		!strings.Contains(data, `"code":-32603`) || !strings.Contains(data, "no answer") {
		t.Errorf("no streaming agent: %s", body)
	}
}

// readSSE reads the data lines of an SSE response as JSON-RPC responses.
func readSSE(t *testing.T, resp *http.Response) []rpcReply {
	t.Helper()
	var out []rpcReply
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, parseReply(t, data))
		}
	}
	return out
}

// TestStreamMessage: message/stream and SendStreamingMessage are answered
// over SSE chunk by chunk, an artifact update per word, the last marked
// lastChunk, then a final status update.
func TestStreamMessage(t *testing.T) {
	e := start(t, Config{})
	for _, tc := range []struct{ version, body, final string }{
		{"", strings.Replace(sendV03, "message/send", "message/stream", 1), `"state":"completed"`},
		{"1.0", strings.Replace(sendV10, "SendMessage", "SendStreamingMessage", 1), `"state":"TASK_STATE_COMPLETED"`},
	} {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/.a2a/agents/echo", strings.NewReader(tc.body))
		if tc.version != "" {
			req.Header.Set(VersionHeader, tc.version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		events := readSSE(t, resp)
		resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || len(events) != 3 {
			t.Fatalf("version %q: %s, %d events", tc.version, ct, len(events))
		}
		for i, word := range []string{`"hi"`, `" there"`} {
			if r := string(events[i].Result); !strings.Contains(r, word) || strings.Contains(r, `"lastChunk":true`) {
				t.Errorf("event %d: %s", i, r)
			}
		}
		if r := string(events[2].Result); !strings.Contains(r, tc.final) || !strings.Contains(r, `"final":true`) {
			t.Errorf("last event: %s", r)
		}
	}
}

// TestTokens: with tokens, a request needs one that may publish on the
// agent's scope.
func TestTokens(t *testing.T) {
	ts, err := mesh.ParseTokens([]mesh.Token{{Value: "good", Publish: []string{"/agents/"}}, {Value: "other", Publish: []string{"/x/"}}})
	if err != nil {
		t.Fatal(err)
	}
	e := start(t, Config{Tokens: func() *mesh.Tokens { return ts }})
	if code, _ := e.post(t, "/.a2a/agents/echo", "", sendV03); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	if code, _ := e.post(t, "/.a2a/agents/echo", "", sendV03, "Authorization", "Bearer other"); code != http.StatusForbidden {
		t.Errorf("other token: %d", code)
	}
	if code, body := e.post(t, "/.a2a/agents/echo", "", sendV03, "Authorization", "Bearer good"); code != 200 || strings.Contains(body, "error") {
		t.Errorf("good token: %d %s", code, body)
	}
}

// TestCard: the agent card is served at the well-known paths, for the
// default agent and for one agent, naming its endpoint.
func TestCard(t *testing.T) {
	e := start(t, Config{Name: "echo"})
	for path, url := range map[string]string{
		CardPath:                            e.srv.URL + "/.a2a/",
		LegacyCardPath:                      e.srv.URL + "/.a2a/",
		"/.a2a/agents/echo/" + CardPath[1:]: e.srv.URL + "/.a2a/agents/echo/",
	} {
		resp, err := http.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var card struct {
			Name         string          `json:"name"`
			URL          string          `json:"url"`
			Capabilities map[string]bool `json:"capabilities"`
		}
		err = json.NewDecoder(resp.Body).Decode(&card)
		resp.Body.Close()
		if err != nil || card.Name != "echo" || card.URL != url || !card.Capabilities["streaming"] {
			t.Errorf("%s: %+v %v", path, card, err)
		}
	}
}

// TestStreamClientGoneCancelsAgent: an A2A client that goes away in the
// middle of a stream cancels the streamed call at the agent.
func TestStreamClientGoneCancelsAgent(t *testing.T) {
	e := start(t, Config{})
	causes := make(chan error, 1)
	ss, err := streamcall.Serve(e.bus, scope.MustParse("/agents/slow/"), func(ctx context.Context, req *streamcall.Request, w *streamcall.Writer) error {
		if err := w.Write(ctx, []byte("first")); err != nil {
			return err
		}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/.a2a/agents/slow",
		strings.NewReader(strings.Replace(sendV03, "message/send", "message/stream", 1)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "id: 0") {
		t.Fatalf("first line %q %v", line, err)
	}
	cancel()
	select {
	case cause := <-causes:
		if !errors.Is(cause, streamcall.ErrCancelled) {
			t.Fatalf("agent's cause %v", cause)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the client's leaving never reached the agent")
	}
}
