package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/syncbuf"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/introspection"
	"github.com/rsbd/rsbd/scope"
)

// helperEnv makes the test binary run runParticipantsHelper instead of
// the tests: a Go process with one participant of each kind, connected
// to the URI in the variable, until its stdin closes.
const helperEnv = "RSBD_TEST_PARTICIPANTS"

// runParticipantsHelper is the participants process of the introspection
// tests.
func runParticipantsHelper() int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := client.Dial(ctx, os.Getenv(helperEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer b.Close()
	var errs []error
	_, err = b.NewInformer(scope.MustParse("/golden/informer"))
	errs = append(errs, err)
	_, err = b.NewListener(scope.MustParse("/golden/listener"))
	errs = append(errs, err)
	_, err = b.NewReader(scope.MustParse("/golden/reader"))
	errs = append(errs, err)
	srv, err := b.NewLocalServer(scope.MustParse("/golden/server"))
	errs = append(errs, err)
	if err == nil {
		errs = append(errs, srv.AddMethod("ping", func(context.Context, *client.Event) (any, error) { return "pong", nil }))
	}
	_, err = b.NewRemoteServer(scope.MustParse("/golden/server"))
	errs = append(errs, err)
	for _, err := range errs {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// startProcess runs bin with args (and env) until the end of the test and,
// if waitLine, waits for its first line of output.
func startProcess(t *testing.T, waitLine bool, env []string, bin string, args ...string) (first string, out *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	out = &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = pw, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		pw.Close()
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(out, pr)
	}()
	if !waitLine {
		return "", out
	}
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("%s %v printed nothing: %s", bin, args, out)
		}
		return l, out
	case <-time.After(30 * time.Second):
		t.Fatalf("%s %v: no output within 30s: %s", bin, args, out)
	}
	return "", nil
}

// introspectCluster is two daemons with Go participants: a helper process
// at the first, an rsb logger at the second.
type introspectCluster struct {
	ds  []*clienttest.Daemon
	rsb string
}

func startIntrospectCluster(t *testing.T) introspectCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("rsbd processes are not started with -short")
	}
	ds := clienttest.StartDaemons(t, 2)
	rsb := testutil.Build(t, "github.com/rsbd/rsbd/cmd/rsb")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := startProcess(t, true, []string{helperEnv + "=" + ds[0].URI()}, self, "participants"); l != "ready" {
		t.Fatalf("helper printed %q", l)
	}
	startProcess(t, false, nil, rsb, "logger", "--style", "compact", ds[1].URI()+"/golden/logged")
	return introspectCluster{ds: ds, rsb: rsb}
}

var normalisers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`-?\d+(\.\d+)? (µs|ms|s|min)|\d+ h \d+ min`), "T"},
	{regexp.MustCompile(`^├─\d{6,}`), "├─PID"},
	{regexp.MustCompile(`^([│ ]+(├─|└─))[0-9a-f]{8} `), "${1}ID "},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "ADDR"},
	{regexp.MustCompile(`d(\d)-\d+`), "d$1-PID"},
	{regexp.MustCompile(`(Machine type|Software type|Software version|User) +\S+`), "$1 X"},
	{regexp.MustCompile(`Machine version .*?( +│)`), "Machine version X$1"},
	{regexp.MustCompile(`239\.\d+\.\d+\.\d+:\d+`), "POOL"},
	{regexp.MustCompile(`--ready-file \S+`), "--ready-file PATH"},
}

// treePrefix is the tree drawing at the start of a line; spaces are the
// runs of spaces after it, padding that depends on the replaced values.
var (
	treePrefix = regexp.MustCompile(`^[│ ]*(├─|└─)?`)
	spaces     = regexp.MustCompile(` +`)
)

// normaliseTree replaces what differs between runs (host name, times,
// process and participant ids, addresses, machine) by placeholders and
// sorts the process blocks, whose order follows the process ids.
func normaliseTree(t *testing.T, tree string) string {
	host, _ := os.Hostname()
	lines := strings.Split(strings.TrimSuffix(tree, "\n"), "\n")
	var head []string
	var blocks []string
	last := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "├─") || strings.HasPrefix(l, "└─"):
			last = strings.HasPrefix(l, "└─")
			l = "├─" + strings.TrimPrefix(strings.TrimPrefix(l, "├─"), "└─")
		case last && strings.HasPrefix(l, "  "):
			l = "│ " + l[2:]
		}
		l = strings.ReplaceAll(l, host, "HOST")
		for _, n := range normalisers {
			l = n.re.ReplaceAllString(l, n.with)
		}
		prefix := treePrefix.FindString(l)
		l = prefix + spaces.ReplaceAllString(strings.TrimSpace(l[len(prefix):]), " ")
		switch {
		case strings.HasPrefix(l, "├─"):
			blocks = append(blocks, l)
		case len(blocks) == 0:
			head = append(head, l)
		default:
			blocks[len(blocks)-1] += "\n" + l
		}
	}
	slices.Sort(blocks)
	return strings.Join(append(head, blocks...), "\n") + "\n"
}

// TestIntrospectGolden runs rsb introspect against the second of two
// daemons and compares its tree, normalised, with testdata/introspect.golden
// (RSBD_UPDATE_GOLDEN=1 rewrites it): both daemons, the Go helper at the
// first daemon with a participant of each kind, the rsb logger at the
// second, all RUNNING with their latency measured.
func TestIntrospectGolden(t *testing.T) {
	c := startIntrospectCluster(t)
	tool := processInvoker(c.rsb)
	var r result
	testutil.WaitForMsg(t, 60*time.Second, func() string { return "every process in\n" + r.stdout + r.stderr }, func() bool {
		r = tool(context.Background(), "", "introspect", "--response-timeout", "2s", c.ds[1].URI())
		return r.code == exitOK && strings.Count(r.stdout, "RUNNING") == 4 && strings.Contains(r.stdout, "/golden/server/") &&
			strings.Contains(r.stdout, "/golden/logged/") && !strings.Contains(r.stdout, "??? s")
	})
	golden(t, "introspect.golden", normaliseTree(t, r.stdout))

	r = tool(context.Background(), "", "introspect", "--style", "json", c.ds[0].URI())
	var snap introspection.Snapshot
	if err := json.Unmarshal([]byte(r.stdout), &snap); err != nil || r.code != exitOK {
		t.Fatalf("json style (%d): %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if _, _, n := snap.Count(); n < 6 {
		t.Errorf("json style shows %d participants:\n%s", n, r.stdout)
	}
}

// TestIntrospectDaemons prints both daemons' own view from either one.
func TestIntrospectDaemons(t *testing.T) {
	c := startIntrospectCluster(t)
	tool := processInvoker(c.rsb)
	var r result
	testutil.WaitForMsg(t, 60*time.Second, func() string { return "both daemons in\n" + r.stdout + r.stderr }, func() bool {
		r = tool(context.Background(), "", "introspect", "--daemons", "--style", "json", c.ds[0].URI())
		// The second daemon learns of its logger's subscription a moment
		// after the logger's participant is announced.
		return r.code == exitOK && strings.Count(r.stdout, `"name": "d`) >= 2 && strings.Contains(r.stdout, `"/golden/logged/"`)
	})
	var ds []introspection.DaemonStatus
	if err := json.Unmarshal([]byte(r.stdout), &ds); err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || len(ds[0].Peers) != 1 || ds[0].Peers[0].Name != ds[1].Name || ds[0].Socket != c.ds[0].Info().Socket {
		t.Fatalf("daemons %+v", ds)
	}
	if !slices.Contains(ds[1].Listening, "/golden/logged/") {
		t.Errorf("the second daemon's clients listen to %v", ds[1].Listening)
	}
	r = tool(context.Background(), "", "introspect", "--daemons", c.ds[1].URI())
	for _, want := range []string{ds[0].Name, ds[1].Name, "peers (1)", "listening", "in socket", "drops"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--daemons tree lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestIntrospectMonitor follows a participant's Bye in the monitor style
// (not a terminal: one line per change).
func TestIntrospectMonitor(t *testing.T) {
	nodes := clienttest.StartNodes(t, 1)
	uri := "socket://" + nodes[0].SocketAddr().String()
	b, err := client.Dial(bg(), uri)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, err := b.NewListener(scope.MustParse("/monitor/gone"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg())
	out := &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"introspect", "--style", "monitor", "--response-timeout", "500ms", uri},
			stdio{in: strings.NewReader(""), out: out, err: out})
	}()
	testutil.WaitFor(t, 30*time.Second, "the tree", func() bool { return strings.Contains(out.String(), "/monitor/gone/") })
	l.Close()
	testutil.WaitForMsg(t, 30*time.Second, func() string { return "the Bye in\n" + out.String() }, func() bool {
		return regexp.MustCompile(`participant-removed .* listener [0-9a-f-]{36} /monitor/gone/`).MatchString(out.String())
	})
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("monitor exited %d: %s", code, out)
	}
}

// TestInfo runs rsb info against a daemon of a two-daemon cluster.
func TestInfo(t *testing.T) {
	if testing.Short() {
		t.Skip("rsbd processes are not started with -short")
	}
	ds := clienttest.StartDaemons(t, 2)
	tool := processInvoker(testutil.Build(t, "github.com/rsbd/rsbd/cmd/rsb"))
	var r result
	testutil.WaitForMsg(t, 60*time.Second, func() string { return "both daemons in\n" + r.stdout + r.stderr }, func() bool {
		r = tool(context.Background(), "", "info", "--verbose", ds[0].URI())
		return r.code == exitOK && strings.Contains(r.stdout, "cluster      2 daemons")
	})
	name := strings.TrimSuffix(strings.SplitN(strings.TrimPrefix(ds[0].Name(), ""), " ", 2)[0], "")
	for _, want := range []string{"Configuration\n", "Transports\n  socket       " + ds[0].URI() + "/",
		"  daemon       " + name + " on ", "Converters\n", "  utf-8-string ", ".rsb.protocol.introspection.Hello",
		"Participants\n  kinds        informer listener reader local-server remote-server\n", "participants in"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("info lacks %q:\n%s", want, r.stdout)
		}
	}
	r = tool(context.Background(), "", "info", "--configuration")
	if r.code != exitOK || strings.Contains(r.stdout, "Converters") || !strings.HasPrefix(r.stdout, "Configuration\n") {
		t.Errorf("--configuration alone (%d):\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = tool(context.Background(), "", "info", "--transports", "socket://127.0.0.1:1")
	if r.code != exitFailure || !strings.Contains(r.stderr, "cannot reach the daemon") {
		t.Errorf("unreachable daemon (%d):\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// golden compares got with testdata/name; RSBD_UPDATE_GOLDEN=1 rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := "testdata/" + name
	if os.Getenv("RSBD_UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("%s differs:\n--- got\n%s--- want\n%s", name, got, want)
	}
}

// TestMonitorRedraw: on a terminal the monitor clears the screen, prints
// the tree and the latest changes below it.
func TestMonitorRedraw(t *testing.T) {
	var b strings.Builder
	ch := introspection.Change{Time: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC), Kind: introspection.ParticipantAdded,
		Process:     introspection.ProcessRef{HostID: "h", PID: "7"},
		Participant: introspection.Participant{Kind: "listener", ID: "id", Scope: "/a/"}}
	if err := redraw(&b, introspection.Snapshot{}, []introspection.Change{ch}); err != nil {
		t.Fatal(err)
	}
	want := "\x1b[H\x1b[2J<no entries>\n\nLatest changes:\n  10:00:00.000 participant-added host h process 7 listener id /a/\n"
	if b.String() != want {
		t.Fatalf("redraw wrote %q", b.String())
	}
}
