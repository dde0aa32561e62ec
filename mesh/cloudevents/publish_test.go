package cloudevents

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/cloudevent/filter"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// curlPost posts body to url with the headers and returns the status code
// and the reply.
func curlPost(t *testing.T, url, body string, headers ...string) (int, string) {
	t.Helper()
	args := []string{"-sS", "-X", "POST", url, "--data-binary", "@-", "-w", "\n%{http_code}"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	cmd := exec.Command(curl(t), args...)
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl: %v", err)
	}
	text := strings.TrimSpace(string(out))
	i := strings.LastIndexByte(text, '\n')
	n, err := strconv.Atoi(text[i+1:])
	if err != nil {
		t.Fatalf("curl output %q: %v", out, err)
	}
	return n, strings.TrimSpace(text[:max(i, 0)])
}

func TestCurlPublishesBinaryStructuredAndBatch(t *testing.T) {
	e := start(t, Config{})
	rd := e.reader(t, "/robot/")

	code, reply := curlPost(t, e.srv.URL+"/robot/arm", "hello",
		"ce-specversion: 1.0", "ce-id: b1", "ce-source: /curl", "ce-type: com.example.binary",
		"ce-color: %22red%22", "Content-Type: text/plain; charset=utf-8")
	if code != http.StatusAccepted || !strings.Contains(reply, `"id":"b1"`) {
		t.Fatalf("binary: %d %s", code, reply)
	}
	ev := read(t, rd)
	if ev.Scope.String() != "/robot/arm/" || string(ev.Data) != "hello" || ev.WireSchema != "utf-8-string" {
		t.Errorf("binary event %+v", ev.Event)
	}
	if userInfo(t, ev, "ce:id") != "b1" || userInfo(t, ev, "ce:type") != "com.example.binary" ||
		userInfo(t, ev, "ce:source") != "/curl" || userInfo(t, ev, "ce:color") != `"red"` {
		t.Errorf("binary user infos %+v", ev.MetaData.UserInfos)
	}

	code, reply = curlPost(t, e.srv.URL+"/robot/",
		`{"specversion":"1.0","id":"s1","source":"/curl","type":"com.example.structured","subject":"/robot/leg/","data":{"v":1}}`,
		"Content-Type: application/cloudevents+json; charset=utf-8")
	if code != http.StatusAccepted {
		t.Fatalf("structured: %d %s", code, reply)
	}
	ev = read(t, rd)
	if ev.Scope.String() != "/robot/leg/" || string(ev.Data) != `{"v":1}` || ev.WireSchema != "application/json" ||
		userInfo(t, ev, "ce:id") != "s1" {
		t.Errorf("structured event %+v", ev.Event)
	}

	code, reply = curlPost(t, e.srv.URL+"/robot/",
		`[{"specversion":"1.0","id":"a","source":"/curl","type":"t","data_base64":"AAEC","datacontenttype":"application/octet-stream"},
		  {"specversion":"1.0","id":"b","source":"/curl","type":"t"}]`,
		"Content-Type: application/cloudevents-batch+json")
	var r struct{ Accepted []accepted }
	if err := json.Unmarshal([]byte(reply), &r); code != http.StatusAccepted || err != nil || len(r.Accepted) != 2 ||
		r.Accepted[1].ID != "b" || r.Accepted[1].RSBID == "" {
		t.Fatalf("batch: %d %s %v", code, reply, err)
	}
	a, b := read(t, rd), read(t, rd)
	if !bytes.Equal(a.Data, []byte{0, 1, 2}) || a.WireSchema != "bytes" || userInfo(t, a, "ce:id") != "a" ||
		len(b.Data) != 0 || b.WireSchema != "void" || userInfo(t, b, "ce:id") != "b" || b.ID.String() != r.Accepted[1].RSBID {
		t.Errorf("batch events %+v\n%+v", a.Event, b.Event)
	}
	if st := e.g.Stats(); st.Published != 4 || len(st.Rejected) != 0 {
		t.Errorf("stats %+v", st)
	}
}

// post posts body with content type ct and headers to e's gateway.
func (e *env) post(t *testing.T, path, ct, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, reply := testutil.Do(t, http.DefaultClient, req)
	return resp.StatusCode, reply
}

func TestBadInput(t *testing.T) {
	e := start(t, Config{MaxBodyBytes: 4096})
	const ok = `"specversion":"1.0","id":"1","source":"/s","type":"t"`
	bin := map[string]string{"ce-specversion": "1.0", "ce-id": "1", "ce-source": "/s", "ce-type": "t"}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for a, b := range bin {
			if _, set := m[a]; !set {
				m[a] = b
			}
		}
		return m
	}
	for _, tc := range []struct {
		name, path, ct, body string
		headers              map[string]string
		status               int
		reason               string
	}{
		{"bad JSON", "/a/", "application/cloudevents+json", `{` + ok, nil, 400, "malformed"},
		{"bad batch", "/a/", "application/cloudevents-batch+json", `[{` + ok + `},{}]`, nil, 400, "malformed"},
		{"bad attribute name", "/a/", "application/cloudevents+json", `{` + ok + `,"Bad":"x"}`, nil, 400, "malformed"},
		{"bad header name", "/a/", "text/plain", "x", with("ce-bad_name", "x"), 400, "malformed"},
		{"no specversion", "/a/", "text/plain", "x", map[string]string{"ce-id": "1"}, 400, "malformed"},
		{"ce-datacontenttype", "/a/", "text/plain", "x", with("ce-datacontenttype", "text/plain"), 400, "malformed"},
		{"bad percent", "/a/", "text/plain", "x", with("ce-id", "%zz"), 400, "malformed"},
		{"oversize", "/a/", "text/plain", strings.Repeat("x", 5000), bin, 413, "too_large"},
		{"xml", "/a/", "application/cloudevents+xml", "<x/>", nil, 415, "format"},
		{"subject outside", "/a/", "application/cloudevents+json", `{` + ok + `,"subject":"/b/"}`, nil, 400, "subject"},
		{"bad scope", "/a%20b/", "application/cloudevents+json", `{` + ok + `}`, nil, 400, "scope"},
	} {
		before := e.g.Stats().Rejected[tc.reason]
		status, body := e.post(t, tc.path, tc.ct, tc.body, tc.headers)
		if status != tc.status || !strings.Contains(body, `"reason":"`+tc.reason+`"`) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, status, body, tc.status, tc.reason)
		}
		if got := e.g.Stats().Rejected[tc.reason]; got != before+1 {
			t.Errorf("%s: counter %s %d, want %d", tc.name, tc.reason, got, before+1)
		}
	}
	req, _ := http.NewRequest(http.MethodPut, e.srv.URL+"/a/", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, POST" {
		t.Errorf("PUT: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// A body shorter than its Content-Length: the client goes away.
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(conn, "POST /a/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/cloudevents+json\r\nContent-Length: 100\r\n\r\n{\"spec")
	_ = conn.(*net.TCPConn).CloseWrite()
	_, _ = io.ReadAll(conn)
	conn.Close()
	if e.g.Stats().Rejected["body"] != 1 {
		t.Errorf("truncated body not counted: %+v", e.g.Stats())
	}
	// Nothing else is disturbed: a good event still goes through.
	rd := e.reader(t, "/a/")
	if status, body := e.post(t, "/a/", "application/cloudevents+json", `{`+ok+`}`, nil); status != 202 {
		t.Fatalf("good event after bad ones: %d %s", status, body)
	}
	if ev := read(t, rd); userInfo(t, ev, "ce:id") != "1" {
		t.Errorf("event %+v", ev.Event)
	}
}

func TestExpiredEvents(t *testing.T) {
	e := start(t, Config{})
	rd := e.reader(t, "/ttl/")
	old := `"time":"2020-01-01T00:00:00Z"`
	batch := `[{"specversion":"1.0","id":"late","source":"/s","type":"t",` + old + `,"emttl":"1000"},
		{"specversion":"1.0","id":"fresh","source":"/s","type":"t",` + old + `,"emttl":"` + strconv.Itoa(1<<62) + `"}]`
	status, body := e.post(t, "/ttl/", cloudevent.BatchMediaType, batch, nil)
	if status != 202 || !strings.Contains(body, `{"id":"late","expired":true}`) {
		t.Fatalf("%d %s", status, body)
	}
	if ev := read(t, rd); userInfo(t, ev, "ce:id") != "fresh" {
		t.Errorf("published %+v", ev.Event)
	}
	if st := e.g.Stats(); st.Expired != 1 || st.Published != 1 {
		t.Errorf("stats %+v", st)
	}
	if status, body := e.post(t, "/ttl/", cloudevent.MediaType, `{"specversion":"1.0","id":"1","source":"/s","type":"t","emttl":"soon"}`, nil); status != 400 {
		t.Errorf("bad emttl: %d %s", status, body)
	}
	// An RSB event that carries an expired emttl is not delivered.
	s, err := e.g.subscribe(scope.MustParse("/ttl/"), filter.Filter{}, formatCloudEvents)
	if err != nil {
		t.Fatal(err)
	}
	defer e.g.closeSubscription(s)
	inf, err := e.bus.NewInformer(scope.MustParse("/ttl/"))
	if err != nil {
		t.Fatal(err)
	}
	defer inf.Close()
	ev := &client.Event{Event: notification.Event{WireSchema: "bytes", Data: []byte("x")}}
	ev.MetaData.CreateTime = 1_000_000
	ev.MetaData.SetUserInfo("ce:emttl", "1")
	if err := inf.PublishEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, waitTimeout, "expired delivery counted", func() bool { return e.g.Stats().Expired == 2 })
	if len(s.q) != 0 {
		t.Errorf("an expired event was queued")
	}
}
