package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// stuckWriter blocks its first write until release is closed.
type stuckWriter struct {
	once     sync.Once
	started  chan struct{}
	release  chan struct{}
	mu       sync.Mutex
	received bytes.Buffer
}

func (w *stuckWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.started); <-w.release })
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.received.Write(b)
}

// TestLoggerCountsDrops: with --max-queued-events 2 and an output that is
// stuck, the events beyond the queue are dropped and the logger reports
// how many when it ends.
func TestLoggerCountsDrops(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	uri := "socket://" + nodes[0].SocketAddr().String()
	o, err := parseLogger([]string{"--style", "compact", "--max-queued-events", "2", uri + "/drops"}, client.DefaultURI())
	if err != nil {
		t.Fatal(err)
	}
	var lis atomic.Pointer[client.Listener]
	o.listening = func(l *client.Listener) { lis.Store(l) }
	w := &stuckWriter{started: make(chan struct{}), release: make(chan struct{})}
	var errb bytes.Buffer
	ctx, cancel := context.WithCancel(bg())
	done := make(chan error, 1)
	go func() { done <- logEvents(ctx, o, stdio{out: w, err: &errb}) }()

	pub := dialClient(t, uri)
	inf, err := pub.NewInformer(scope.MustParse("/drops"))
	if err != nil {
		t.Fatal(err)
	}
	publish := func(p any) {
		if _, err := inf.Publish(bg(), p); err != nil {
			t.Fatal(err)
		}
	}
	for stuck := false; !stuck; {
		publish("first")
		select {
		case <-w.started:
			stuck = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	const burst = 200
	for i := range burst {
		publish(int64(i))
	}
	// The output is stuck on the first event and the queue holds two: the
	// rest of the burst is dropped.
	testutil.WaitFor(t, 30*time.Second, "the burst dropped", func() bool { return lis.Load().Stats().Dropped >= burst-2 })
	close(w.release)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^rsb logger: (\d+) events dropped, the output not keeping up \((\d+) over --max-queued-events, 0 over --max-queued-bytes\)\n$`).
		FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("stderr %q", errb.String())
	}
	dropped, _ := strconv.Atoi(m[1])
	if dropped < burst-2 || m[1] != m[2] {
		t.Fatalf("%d dropped of a burst of %d beyond a queue of 2: %s", dropped, burst, errb.String())
	}
	t.Logf("%d dropped", dropped)
}
