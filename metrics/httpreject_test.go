package metrics

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/internal/testutil"
)

// rawRequest sends raw to addr and returns the status line of the answer
// ("" when the server closed without one).
func rawRequest(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// TestServerCountsRejects: a malformed request, oversized headers and an
// unknown path are answered with 4xx and counted by reason; the server
// then still answers /livez.
func TestServerCountsRejects(t *testing.T) {
	s := NewServer(NewHandler(prometheus.NewRegistry(), nil), quietLogger())
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	addr := s.Addr().String()
	for raw, want := range map[string]string{
		"\x00\x01garbage\r\n\r\n": "HTTP/1.1 400",
		"GET /livez HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 2*MaxHeaderBytes) + "\r\n\r\n": "HTTP/1.1 431",
		"GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n":                                     "HTTP/1.1 404",
	} {
		if got := rawRequest(t, addr, raw); !strings.HasPrefix(got, want) {
			t.Errorf("%.20q: answer %q, want %s", raw, got, want)
		}
	}
	resp, err := http.Get("http://" + addr + "/livez")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/livez after garbage: %d", resp.StatusCode)
	}
	// The server sees each close after the client read the answer.
	testutil.WaitFor(t, 10*time.Second, "2 no_request and 1 not_found", func() bool {
		r := s.HTTPRejects()
		return r[HTTPNoRequest] == 2 && r[HTTPNotFound] == 1
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(s.Collector())
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || len(mfs[0].GetMetric()) != int(NumHTTPRejectReasons) {
		t.Fatalf("collector: %v %v", mfs, err)
	}
}
