package main

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/syncbuf"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// tally counts the events a Go listener receives, by payload.
type tally struct {
	mu   sync.Mutex
	seen map[string]int
	tags map[string]string // payload -> bridge tag
}

func listen(t *testing.T, uri, sc string) *tally {
	t.Helper()
	l, err := dialClient(t, uri).NewListener(scope.MustParse(sc))
	if err != nil {
		t.Fatal(err)
	}
	ty := &tally{seen: map[string]int{}, tags: map[string]string{}}
	l.AddHandler(func(ev *client.Event) error {
		s, _ := ev.Payload.(string)
		tag, _ := ev.MetaData.UserInfo(bridgeTagKey)
		ty.mu.Lock()
		defer ty.mu.Unlock()
		ty.seen[ev.Scope.String()+" "+s]++
		ty.tags[s] = tag
		return nil
	})
	return ty
}

func (ty *tally) count(key string) int {
	ty.mu.Lock()
	defer ty.mu.Unlock()
	return ty.seen[key]
}

// TestBridgeTwoClusters runs rsb bridge 'A/br <-> B/bridged' between two
// daemons that are not joined (each its own group pool and gossip): events
// cross once in each direction, tagged, and nothing comes back.
func TestBridgeTwoClusters(t *testing.T) {
	if testing.Short() {
		t.Skip("rsbd processes are not started with -short")
	}
	a, b := clienttest.StartDaemons(t, 1)[0], clienttest.StartDaemons(t, 1)[0]
	if a.Metric("rsbd_peers") != 0 || b.Metric("rsbd_peers") != 0 {
		t.Fatal("the two daemons are joined")
	}
	bridgeBothWays(t, a.URI(), b.URI())
}

// TestBridgeDaemonAndServer bridges an rsbd process and the RSB socket
// server of a node in the test process, a bus of its own.
func TestBridgeDaemonAndServer(t *testing.T) {
	if testing.Short() {
		t.Skip("rsbd processes are not started with -short")
	}
	a := clienttest.StartDaemons(t, 1)[0]
	server := clienttest.StartNodes(t, 1)[0]
	bridgeBothWays(t, a.URI(), "socket://"+server.SocketAddr().String())
}

// bridgeBothWays runs rsb bridge 'A/br <-> B/bridged' and checks that
// events cross once in each direction, tagged, and that nothing comes back.
func bridgeBothWays(t *testing.T, uriA, uriB string) {
	t.Helper()
	bin := testutil.Build(t, "github.com/rsbd/rsbd/cmd/rsb")
	cmd := exec.Command(bin, "bridge", uriA+"/br <-> "+uriB+"/bridged")
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	atA, atB := listen(t, uriA, "/"), listen(t, uriB, "/")
	infA, err := dialClient(t, uriA).NewInformer(scope.MustParse("/br"))
	if err != nil {
		t.Fatal(err)
	}
	infB, err := dialClient(t, uriB).NewInformer(scope.MustParse("/bridged"))
	if err != nil {
		t.Fatal(err)
	}
	// The bridge's listeners need a moment to reach each daemon: probe
	// until one crosses each way.
	probe := func(inf *client.Informer, sub string, at *tally, key string) {
		t.Helper()
		sc := inf.Scope().Concat(scope.MustParse(sub))
		var sent time.Time
		testutil.WaitFor(t, 30*time.Second, "a probe crosses to "+key, func() bool {
			if at.count(key) > 0 {
				return true
			}
			if time.Since(sent) > 200*time.Millisecond {
				sent = time.Now()
				ev := &client.Event{Payload: "probe"}
				ev.Scope = sc
				if err := inf.PublishEvent(bg(), ev); err != nil {
					t.Fatal(err)
				}
			}
			return false
		})
	}
	probe(infA, "/probe", atB, "/bridged/probe/ probe")
	probe(infB, "/probe", atA, "/br/probe/ probe")

	const n = 20
	for i := range n {
		for _, p := range []struct {
			inf *client.Informer
			who string
		}{{infA, "from-a"}, {infB, "from-b"}} {
			ev := &client.Event{Payload: fmt.Sprintf("%s-%d", p.who, i)}
			ev.Scope = p.inf.Scope().Concat(scope.MustParse("/sub"))
			if err := p.inf.PublishEvent(bg(), ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	last := fmt.Sprintf("-%d", n-1)
	testutil.WaitFor(t, 30*time.Second, "the last events cross", func() bool {
		return atB.count("/bridged/sub/ from-a"+last) == 1 && atA.count("/br/sub/ from-b"+last) == 1
	})
	// A final round trip orders the check after anything still on its way.
	probe(infA, "/end", atB, "/bridged/end/ probe")
	probe(infB, "/end", atA, "/br/end/ probe")
	for i := range n {
		for _, c := range []struct {
			at   *tally
			key  string
			want int
		}{
			{atB, fmt.Sprintf("/bridged/sub/ from-a-%d", i), 1}, // crossed once
			{atA, fmt.Sprintf("/br/sub/ from-a-%d", i), 1},      // the original only, nothing came back
			{atA, fmt.Sprintf("/br/sub/ from-b-%d", i), 1},
			{atB, fmt.Sprintf("/bridged/sub/ from-b-%d", i), 1},
		} {
			if got := c.at.count(c.key); got != c.want {
				t.Errorf("%s delivered %d times, want %d", c.key, got, c.want)
			}
		}
	}
	atB.mu.Lock()
	tagB := atB.tags["from-a-0"]
	atB.mu.Unlock()
	atA.mu.Lock()
	tagA, own := atA.tags["from-b-0"], atA.tags["from-a-0"]
	atA.mu.Unlock()
	if !strings.HasSuffix(tagB, "/0") || !strings.HasSuffix(tagA, "/1") || own != "" {
		t.Errorf("tags: crossed to B %q, crossed to A %q, original at A %q", tagB, tagA, own)
	}
	// Interrupted, the bridge ends in order and reports.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("bridge exited: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("bridge still running 30s after SIGINT\n%s", stderr.String())
	}
	if out := stderr.String(); !strings.Contains(out, "events not sent back") {
		t.Errorf("no report of the events not sent back: %q", out)
	}
}
