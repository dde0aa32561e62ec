package cloudevents

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
)

// poll GETs path of e's gateway as a long-poll and returns the status,
// the cursor and the events of the reply.
func (e *env) poll(t *testing.T, path string) (int, string, []*cloudevent.Event) {
	t.Helper()
	resp, err := http.Get(e.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, "", nil
	}
	if ct := resp.Header.Get("Content-Type"); ct != cloudevent.BatchMediaType {
		t.Fatalf("Content-Type %q", ct)
	}
	evs, err := cloudevent.UnmarshalBatch(body)
	if err != nil {
		t.Fatalf("batch %s: %v", body, err)
	}
	return resp.StatusCode, resp.Header.Get(CursorHeader), evs
}

func TestLongPoll(t *testing.T) {
	e := start(t, Config{})
	code, cur, evs := e.poll(t, "/lp/?wait=0s")
	if code != http.StatusOK || cur == "" || len(evs) != 0 {
		t.Fatalf("first poll: %d %q %d events", code, cur, len(evs))
	}
	e.waitSubscribers(t, 1)
	// Events published between polls wait for the next one.
	e.publishRSB(t, "/lp/a/", "one")
	e.publishRSB(t, "/other/", "not polled")
	e.publishRSB(t, "/lp/b/", "two")
	var got []string
	for len(got) < 2 {
		code, next, evs := e.poll(t, "/lp/?wait=5s&after="+cur)
		if code != http.StatusOK || next != cur {
			t.Fatalf("poll: %d %q", code, next)
		}
		for _, ev := range evs {
			got = append(got, string(ev.Data))
		}
	}
	if fmt.Sprint(got) != "[one two]" {
		t.Errorf("polled %v", got)
	}
	// A reply holds at most pollMaxEvents; the rest comes with the next.
	e.g.polls.mu.Lock()
	p := e.g.polls.byCur[cur]
	e.g.polls.mu.Unlock()
	for i := range pollMaxEvents + 10 {
		e.publishRSB(t, "/lp/", fmt.Sprint(i))
	}
	testutil.WaitFor(t, waitTimeout, "events queued", func() bool { return len(p.s.q) == pollMaxEvents+10 })
	_, _, first := e.poll(t, "/lp/?wait=5s&after="+cur)
	n := len(first)
	for n < pollMaxEvents+10 {
		_, _, evs := e.poll(t, "/lp/?wait=5s&after="+cur)
		n += len(evs)
	}
	if len(first) != pollMaxEvents || n != pollMaxEvents+10 {
		t.Errorf("first reply %d events, %d in all", len(first), n)
	}

	// A cursor being polled refuses a second poll.
	e.g.polls.mu.Lock()
	e.g.polls.byCur[cur].busy = true
	e.g.polls.mu.Unlock()
	if code, _, _ := e.poll(t, "/lp/?after="+cur); code != http.StatusConflict || e.g.Stats().Rejected["poll_busy"] != 1 {
		t.Errorf("busy cursor: %d", code)
	}
	e.g.polls.mu.Lock()
	p.busy = false
	e.g.polls.mu.Unlock()

	// A cursor not polled expires, counting what it held.
	e.publishRSB(t, "/lp/", "left behind")
	testutil.WaitFor(t, waitTimeout, "event queued", func() bool { return len(p.s.q) > 0 })
	e.g.expirePoller(cur, p)
	e.waitSubscribers(t, 0)
	if st := e.g.Stats(); st.PollExpired != 1 {
		t.Errorf("poll_expired %d", st.PollExpired)
	}
	if code, _, _ := e.poll(t, "/lp/?after="+cur); code != http.StatusGone || e.g.Stats().Rejected["cursor"] != 1 {
		t.Errorf("expired cursor: %d", code)
	}
}

func TestLongPollRefused(t *testing.T) {
	e := start(t, Config{})
	_, cur, _ := e.poll(t, "/lp/?wait=0s")
	for _, c := range []struct {
		path   string
		code   int
		reason string
	}{
		{"/lp/?wait=soon", 400, "poll"},
		{"/lp/?wait=-1s", 400, "poll"},
		{"/lp/?wait=31s", 400, "poll"},
		{"/lp/?wait=1s&format=raw", 400, "out_format"},
		{"/lp/?wait=1s&filter=" + url.QueryEscape(`{"bogus":{}}`), 400, "filter"},
		{"/lp/?after=nope", 410, "cursor"},
		{"/elsewhere/?after=" + cur, 400, "poll"},
	} {
		before := e.g.Stats().Rejected[c.reason]
		code, _, _ := e.poll(t, c.path)
		if code != c.code || e.g.Stats().Rejected[c.reason] != before+1 {
			t.Errorf("%s: %d, want %d counted as %s (%v)", c.path, code, c.code, c.reason, e.g.Stats().Rejected)
		}
	}
	if _, _, evs := e.poll(t, "/lp/?after="+cur); len(evs) != 0 {
		t.Errorf("events %v", evs)
	}
}
