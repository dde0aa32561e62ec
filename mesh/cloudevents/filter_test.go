package cloudevents

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/cloudevent"
)

// TestFilteredSubscriptions checks an SSE subscription with a prefix filter
// on type, and one with an all of two attributes, get exactly the events
// they match.
func TestFilteredSubscriptions(t *testing.T) {
	e := start(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	open := func(flt string) *bufio.Scanner {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/f/?filter="+url.QueryEscape(flt), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", flt, resp.StatusCode)
		}
		return bufio.NewScanner(resp.Body)
	}
	byPrefix := open(`{"prefix":{"type":"com.example."}}`)
	byAll := open(`{"all":[{"exact":{"color":"red"}},{"suffix":{"subject":"/arm/"}}]}`)
	e.waitSubscribers(t, 2)
	for _, ev := range []struct{ id, typ, color, subject string }{
		{"1", "com.example.a", "blue", "/f/leg/"}, // prefix only
		{"2", "org.other", "red", "/f/arm/"},      // all only
		{"3", "org.other", "red", "/f/leg/"},      // neither
		{"4", "com.example.b", "red", "/f/arm/"},  // both
	} {
		body := `{"specversion":"1.0","id":"` + ev.id + `","source":"/s","type":"` + ev.typ +
			`","color":"` + ev.color + `","subject":"` + ev.subject + `"}`
		if status, reply := e.post(t, "/f/", cloudevent.MediaType, body, nil); status != http.StatusAccepted {
			t.Fatalf("%d %s", status, reply)
		}
	}
	next := func(s *bufio.Scanner) string {
		for s.Scan() {
			if data, ok := strings.CutPrefix(s.Text(), "data: "); ok {
				ce, err := cloudevent.Unmarshal([]byte(data))
				if err != nil {
					t.Fatal(err)
				}
				return ce.ID // the posted id, back from its "ce:id" user info
			}
		}
		t.Fatal("stream ended")
		return ""
	}
	if a, b := next(byPrefix), next(byPrefix); a != "1" || b != "4" {
		t.Errorf("prefix filter got %s, %s", a, b)
	}
	if a, b := next(byAll), next(byAll); a != "2" || b != "4" {
		t.Errorf("all filter got %s, %s", a, b)
	}
	if status, body := func() (int, string) {
		resp, err := http.Get(e.srv.URL + "/f/?filter=" + url.QueryEscape(`{"sql":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b := make([]byte, 512)
		n, _ := resp.Body.Read(b)
		return resp.StatusCode, string(b[:n])
	}(); status != http.StatusBadRequest || !strings.Contains(body, `"reason":"filter"`) {
		t.Errorf("bad filter: %d %s", status, body)
	}
}
