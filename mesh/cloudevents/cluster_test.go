package cloudevents

import (
	"bufio"
	"context"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// TestAcrossTwoNodes runs the gateway on node A of a two-node cluster: curl
// publishes at A and an RSB socket client at B receives the events; an RSB
// socket client publishes at B and curl's SSE stream at A receives it.
func TestAcrossTwoNodes(t *testing.T) {
	curlBin := curl(t)
	nodes := clienttest.StartNodes(t, 2)
	busA := client.Embedded(nodes[0])
	g, err := New(busA, Config{Logger: clienttest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer func() { _ = g.Close(); srv.Close(); _ = busA.Close() }()

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	busB, err := client.Dial(ctx, "socket://"+nodes[1].SocketAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer busB.Close()
	rd, err := busB.NewReader(scope.MustParse("/robot/"))
	if err != nil {
		t.Fatal(err)
	}
	// Node A learns B's interest through the cluster: publish until an
	// event arrives, then check the ones that follow.
	e := &env{g: g, srv: srv, bus: busA}
	testutil.WaitFor(t, waitTimeout, "B's listener reachable from A", func() bool {
		e.post(t, "/robot/probe/", "text/plain", "probe", map[string]string{
			"ce-specversion": "1.0", "ce-id": "probe", "ce-source": "/test", "ce-type": "probe"})
		rctx, rcancel := context.WithTimeout(ctx, 50*testutil.PollEvery)
		defer rcancel()
		_, err := rd.Read(rctx)
		return err == nil
	})
	for {
		rctx, rcancel := context.WithTimeout(ctx, 20*testutil.PollEvery)
		_, err := rd.Read(rctx) // drain the other probes
		rcancel()
		if err != nil {
			break
		}
	}
	code, reply := curlPost(t, srv.URL+"/robot/arm/", "across",
		"ce-specversion: 1.0", "ce-id: x1", "ce-source: /curl", "ce-type: com.example.t",
		"Content-Type: text/plain; charset=utf-8")
	if code != 202 {
		t.Fatalf("%d %s", code, reply)
	}
	ev := read(t, rd)
	if ev.Scope.String() != "/robot/arm/" || string(ev.Data) != "across" || ev.WireSchema != "utf-8-string" ||
		userInfo(t, ev, "ce:id") != "x1" || userInfo(t, ev, "ce:type") != "com.example.t" {
		t.Errorf("at B: %+v", ev.Event)
	}

	// B publishes; curl's SSE stream at A receives.
	sctx, scancel := context.WithCancel(context.Background())
	defer scancel()
	cmd := exec.CommandContext(sctx, curlBin, "-sN", srv.URL+"/robot/")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { scancel(); _ = cmd.Wait() }()
	testutil.WaitFor(t, waitTimeout, "SSE subscriber", func() bool { return g.Stats().Subscribers == 1 })
	inf, err := busB.NewInformer(scope.MustParse("/robot/"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 1<<20)
	got := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if v, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				got <- v
				return
			}
		}
		close(got)
	}()
	// A learns the SSE listener's interest at once (it is local), but B
	// must learn A wants /robot/: publish until the stream shows one.
	var data string
	testutil.WaitFor(t, waitTimeout, "event from B on the SSE stream", func() bool {
		pev := &client.Event{Event: notification.Event{WireSchema: "utf-8-string", Data: []byte("from B")}}
		if err := inf.PublishEvent(ctx, pev); err != nil {
			t.Fatal(err)
		}
		select {
		case data = <-got:
			return true
		default:
			return false
		}
	})
	ce, err := cloudevent.Unmarshal([]byte(data))
	if err != nil || string(ce.Data) != "from B" || ce.Subject != "/robot/" || ce.DataContentType != "text/plain; charset=utf-8" {
		t.Errorf("SSE event %q: %v", data, err)
	}
}
