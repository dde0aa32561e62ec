package streamcall

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// sseEvent is one SSE event as the test reads it.
type sseEvent struct{ typ, id, data string }

// postSSE POSTs body to url and reads the SSE events of the answer.
func postSSE(t *testing.T, url, body string) (int, []sseEvent) {
	t.Helper()
	resp, err := http.Post(url, "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []sseEvent
	var cur sseEvent
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		switch k {
		case "event":
			cur.typ = v
		case "id":
			cur.id = v
		case "data":
			lines = append(lines, v)
		case "":
			cur.data = strings.Join(lines, "\n")
			out = append(out, cur)
			cur, lines = sseEvent{}, nil
		}
	}
	return resp.StatusCode, out
}

// TestHTTPStream: a POST opens a streamed call and gets its chunks as SSE
// events, the last of type done; a failing handler's error comes as an
// event of type error.
func TestHTTPStream(t *testing.T) {
	bus := embeddedBus(t)
	serve(t, bus, "/llm/", func(ctx context.Context, req *Request, w *Writer) error {
		if string(req.Prompt) == "fail" {
			return errors.New("no model")
		}
		for _, word := range strings.Fields(string(req.Prompt)) {
			if err := w.Write(ctx, []byte(word+"\n"+req.Model)); err != nil {
				return err
			}
		}
		return nil
	})
	h := NewHTTPHandler(bus, HTTPConfig{})
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); _ = h.Close() }()

	code, evs := postSSE(t, srv.URL+HTTPPrefix+"/llm/?model=m&timeout=20s", "a b")
	if code != 200 || len(evs) != 3 {
		t.Fatalf("%d %+v", code, evs)
	}
	if evs[0] != (sseEvent{"", "0", "a\nm"}) || evs[1] != (sseEvent{"", "1", "b\nm"}) || evs[2] != (sseEvent{"done", "2", ""}) {
		t.Errorf("events %+v", evs)
	}
	_, evs = postSSE(t, srv.URL+HTTPPrefix+"/llm/", "fail")
	if len(evs) != 1 || evs[0].typ != "error" || !strings.Contains(evs[0].data, "no model") {
		t.Errorf("failing call: %+v", evs)
	}
	if code, _ := postSSE(t, srv.URL+HTTPPrefix+"/llm/?timeout=x", "a"); code != http.StatusBadRequest {
		t.Errorf("bad timeout: %d", code)
	}
	st := h.Counters().Stats()
	if st.Published != 2 || st.Delivered != 4 || st.Rejected[reasonParams] != 1 || st.Dropped[dropStreamErr] != 1 {
		t.Errorf("counters %+v", st)
	}
}
