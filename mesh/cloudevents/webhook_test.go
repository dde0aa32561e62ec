package cloudevents

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
)

// receiver is a webhook target answering the statuses of script in turn,
// then 200, and recording the events it accepted.
type receiver struct {
	mu       sync.Mutex
	script   []int
	accepted []*cloudevent.Event
	calls    atomic.Int32
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodOptions {
		w.Header().Set("WebHook-Allowed-Origin", "*")
		return
	}
	r.calls.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	status := http.StatusOK
	if len(r.script) > 0 {
		status, r.script = r.script[0], r.script[1:]
	}
	if status == http.StatusOK {
		body := make([]byte, req.ContentLength)
		_, _ = req.Body.Read(body)
		if e, err := cloudevent.Unmarshal(body); err == nil && req.Header.Get("Content-Type") == cloudevent.MediaType {
			r.accepted = append(r.accepted, e)
		}
	}
	w.WriteHeader(status)
}

func (r *receiver) got() []*cloudevent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*cloudevent.Event(nil), r.accepted...)
}

func TestWebhookRetriesThenDelivers(t *testing.T) {
	e := start(t, Config{})
	rcv := &receiver{script: []int{503, 503}}
	target := httptest.NewServer(rcv)
	defer target.Close()
	wh, err := e.g.AddWebhook(WebhookConfig{Scope: "/hook/", URL: target.URL, Backoff: time.Millisecond,
		Filter: `{"prefix":{"type":"com.example."}}`})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	post := func(id, typ string) {
		body := `{"specversion":"1.0","id":"` + id + `","source":"/s","type":"` + typ + `"}`
		if status, reply := e.post(t, "/hook/", cloudevent.MediaType, body, nil); status != http.StatusAccepted {
			t.Fatalf("%d %s", status, reply)
		}
	}
	post("skip", "org.other")
	post("1", "com.example.t")
	testutil.WaitFor(t, waitTimeout, "delivery", func() bool { return len(rcv.got()) == 1 })
	if got := rcv.got()[0]; got.ID != "1" || rcv.calls.Load() != 3 {
		t.Errorf("delivered %+v after %d calls", got, rcv.calls.Load())
	}
	// The receiver records the event before it answers; the webhook counts
	// it once the answer is in.
	testutil.WaitFor(t, waitTimeout, "delivery counted", func() bool { return wh.Stats().Delivered == 1 })
	if st := wh.Stats(); st.Delivered != 1 || st.Retries != 2 || st.DeadLettered != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestWebhookDeadLetter(t *testing.T) {
	e := start(t, Config{})
	rd := e.reader(t, "/dead/")
	rcv := &receiver{script: []int{500, 500, 500}}
	target := httptest.NewServer(rcv)
	defer target.Close()
	wh, err := e.g.AddWebhook(WebhookConfig{Scope: "/hook/", URL: target.URL, Backoff: time.Millisecond,
		MaxAttempts: 3, DeadLetter: "/dead/"})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	body := `{"specversion":"1.0","id":"lost","source":"/s","type":"t","datacontenttype":"text/plain","data":"x"}`
	if status, _ := e.post(t, "/hook/", cloudevent.MediaType, body, nil); status != http.StatusAccepted {
		t.Fatal(status)
	}
	ev := read(t, rd)
	if ev.Scope.String() != "/dead/" || string(ev.Data) != "x" || userInfo(t, ev, "ce:id") != "lost" ||
		userInfo(t, ev, "rsbd:webhook-error") != "target answered 500 Internal Server Error" {
		t.Errorf("dead letter %+v", ev.Event)
	}
	if st := wh.Stats(); st.DeadLettered != 1 || st.Retries != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestWebhookGone(t *testing.T) {
	e := start(t, Config{})
	rcv := &receiver{script: []int{410}}
	target := httptest.NewServer(rcv)
	defer target.Close()
	wh, err := e.g.AddWebhook(WebhookConfig{Scope: "/hook/", URL: target.URL})
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := e.post(t, "/hook/", cloudevent.MediaType, `{"specversion":"1.0","id":"1","source":"/s","type":"t"}`, nil); status != 202 {
		t.Fatal(status)
	}
	testutil.WaitFor(t, waitTimeout, "webhook ended", func() bool { return e.g.Stats().Subscribers == 0 })
	if err := wh.Close(); !errors.Is(err, ErrWebhookGone) {
		t.Errorf("Close: %v", err)
	}
}

func TestWebhookConfig(t *testing.T) {
	e := start(t, Config{})
	for _, c := range []WebhookConfig{
		{Scope: "/a/", URL: "ftp://x"},
		{Scope: "/a/", URL: "http://"},
		{Scope: "a", URL: "http://x"},
		{Scope: "/a/", URL: "http://x", DeadLetter: "/a/dead/"},
		{Scope: "/a/", URL: "http://x", Filter: "{"},
		{Scope: "/a/", URL: "http://x", MaxAttempts: -1},
	} {
		if _, err := e.g.AddWebhook(c); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	// The gateway's Close ends its webhooks.
	if _, err := e.g.AddWebhook(WebhookConfig{Scope: "/a/", URL: "http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	if err := e.g.Close(); err != nil {
		t.Fatal(err)
	}
}
