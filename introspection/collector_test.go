package introspection

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

const waitLong = 30 * time.Second

func dial(t *testing.T, addr string) *client.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := client.DialConfig(ctx, "socket://"+addr, client.Config{Logger: clienttest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// findParticipant returns the participant of kind on sc in s.
func findParticipant(s Snapshot, kind, sc string) (Process, bool) {
	for _, h := range s.Hosts {
		for _, p := range h.Processes {
			var walk func([]Participant) bool
			walk = func(ps []Participant) bool {
				for _, x := range ps {
					if x.Kind == kind && x.Scope == sc || walk(x.Children) {
						return true
					}
				}
				return false
			}
			if walk(p.Participants) {
				return p, true
			}
		}
	}
	return Process{}, false
}

// TestCollectorAcrossDaemons collects the participants of Go processes
// on two nodes from a third connection, sees the process answer echo
// calls, and follows a Bye.
func TestCollectorAcrossDaemons(t *testing.T) {
	nodes := clienttest.StartNodes(t, 2)
	a := dial(t, nodes[0].SocketAddr().String())
	l, err := a.NewListener(scope.MustParse("/robot/"))
	if err != nil {
		t.Fatal(err)
	}
	b := dial(t, nodes[1].SocketAddr().String())
	if _, err := b.NewInformer(scope.MustParse("/cam/")); err != nil {
		t.Fatal(err)
	}
	tool := dial(t, nodes[1].SocketAddr().String())
	c, err := NewCollector(tool, Config{PingInterval: 100 * time.Millisecond, ResponseTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var snap Snapshot
	testutil.WaitForMsg(t, waitLong, func() string { return "participants and echo in " + treeString(snap) }, func() bool {
		snap = c.Snapshot()
		p, ok1 := findParticipant(snap, client.KindListener, "/robot/")
		_, ok2 := findParticipant(snap, client.KindInformer, "/cam/")
		return ok1 && ok2 && p.State == StateRunning && p.Latency != nil && snap.Hosts[0].State == StateUp
	})
	p, _ := findParticipant(snap, client.KindListener, "/robot/")
	if p.ID != strconv.Itoa(os.Getpid()) || p.RSBVersion == "" || len(p.Transports) == 0 {
		t.Fatalf("process %+v", p)
	}
	l.Close()
	testutil.WaitForMsg(t, waitLong, func() string { return "bye in " + treeString(snap) }, func() bool {
		snap = c.Snapshot()
		_, ok := findParticipant(snap, client.KindListener, "/robot/")
		return !ok
	})
	var removed bool
	for _, ch := range c.Changes() {
		removed = removed || ch.Kind == ParticipantRemoved && ch.Participant.Scope == "/robot/"
	}
	if !removed {
		t.Fatal("no participant-removed change")
	}
}

// TestSurveyDaemons has two embedded daemons answer a survey made from a
// socket client of one of them.
func TestSurveyDaemons(t *testing.T) {
	nodes := clienttest.StartNodes(t, 2)
	for i, n := range nodes {
		bus := client.Embedded(n)
		t.Cleanup(func() { bus.Close() })
		name := "daemon-" + strconv.Itoa(i)
		srv, err := ServeDaemon(bus, name, func() DaemonStatus {
			return DaemonStatus{Name: name, Peers: []Peer{{Name: "other"}}, Drops: map[string]uint64{"x": uint64(i)}}
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
	}
	tool := dial(t, nodes[1].SocketAddr().String())
	var got []DaemonStatus
	testutil.WaitFor(t, waitLong, "both daemons answer", func() bool {
		var err error
		got, err = SurveyDaemons(context.Background(), tool, 500*time.Millisecond)
		return err == nil && len(got) == 2
	})
	if got[0].Name != "daemon-0" || got[1].Drops["x"] != 1 || len(got[0].Peers) != 1 {
		t.Fatalf("statuses %+v", got)
	}
}

func treeString(s Snapshot) string {
	var b []byte
	w := &sliceWriter{&b}
	WriteTree(w, s, time.Now())
	return string(b)
}

type sliceWriter struct{ b *[]byte }

func (w *sliceWriter) Write(p []byte) (int, error) { *w.b = append(*w.b, p...); return len(p), nil }
