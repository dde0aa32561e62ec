package introspection

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
	"github.com/rsbd/rsbd/proto/rsbpb/operatingsystem"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// hello serializes a Hello of participant id (one byte repeated) in
// process pid of host hid.
func hello(t testing.TB, id byte, parent byte, kind, sc, hid, pid string) []byte {
	h := &introspection.Hello{
		Kind: proto.String(kind), Id: bytes.Repeat([]byte{id}, 16), Scope: proto.String(sc),
		Transport: []string{"socket://localhost:55555"},
		Process: &operatingsystem.Process{Id: proto.String(pid), ProgramName: proto.String("prog-" + pid),
			CommandlineArguments: []string{"-v", "x"}, StartTime: proto.Uint64(uint64(t0.Add(-time.Hour).UnixMicro())),
			ExecutingUser: proto.String("robot"), RsbVersion: proto.String("0.19.0")},
		Host: &operatingsystem.Host{Id: proto.String(hid), Hostname: proto.String("host-" + hid),
			MachineType: proto.String("x86_64"), MachineVersion: proto.String("A very long CPU model name here"),
			SoftwareType: proto.String("linux"), SoftwareVersion: proto.String("6.1.0")},
	}
	if parent != 0 {
		h.Parent = bytes.Repeat([]byte{parent}, 16)
	}
	b, err := proto.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func bye(t testing.TB, id byte) []byte {
	b, err := proto.Marshal(&introspection.Bye{Id: bytes.Repeat([]byte{id}, 16)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture is a DB with two hosts, three processes, a server with a
// method participant, a tool's own listener and echo samples.
func fixture(t *testing.T) *DB {
	db := NewDB()
	for _, h := range [][]byte{
		hello(t, 1, 0, "listener", "/robot/arm/", "h1", "100"),
		hello(t, 2, 0, "informer", "/robot/arm/joints/", "h1", "100"),
		hello(t, 3, 0, "local-server", "/robot/srv/", "h1", "200"),
		hello(t, 4, 3, "listener", "/robot/srv/echo/", "h1", "200"),
		hello(t, 5, 0, "reader", "/camera/", "h2", "300"),
		hello(t, 6, 0, "listener", "/__rsb/introspection/participants/", "h2", "400"),
	} {
		if _, err := db.Hello(h, t0); err != nil {
			t.Fatal(err)
		}
	}
	ms := t0.UnixMicro()
	db.Echo(ProcessRef{"h1", "100"}, Sample{ms, ms + 1500, ms + 1600, ms + 300}, t0)
	db.NoReply(ProcessRef{"h1", "200"}, t0)
	db.Echo(ProcessRef{"h2", "300"}, Sample{ms, ms + 100, ms + 100, ms + 200}, t0)
	return db
}

// TestDBSnapshot checks the tree, nesting by parent, hidden tool
// participants, states and the NTP estimates.
func TestDBSnapshot(t *testing.T) {
	s := fixture(t).Snapshot()
	if h, p, n := s.Count(); h != 2 || p != 3 || n != 5 {
		t.Fatalf("counts %d hosts %d processes %d participants", h, p, n)
	}
	h1 := s.Hosts[0]
	if h1.Hostname != "host-h1" || h1.State != StateUp || len(h1.Processes) != 2 {
		t.Fatalf("host 1 %+v", h1)
	}
	p100 := h1.Processes[0]
	if p100.State != StateRunning || p100.ClockOffset == nil || p100.Latency == nil {
		t.Fatalf("process 100 %+v", p100)
	}
	// t1-t0 = 1500 µs, t3-t2 = -1300 µs: offset 1400 µs, latency 100 µs.
	if o, l := p100.ClockOffset.Duration(), p100.Latency.Duration(); o != 1400*time.Microsecond || l != 100*time.Microsecond {
		t.Fatalf("offset %v latency %v", o, l)
	}
	p200 := h1.Processes[1]
	if p200.State != StateCrashed || len(p200.Participants) != 1 || len(p200.Participants[0].Children) != 1 ||
		p200.Participants[0].Children[0].Scope != "/robot/srv/echo/" {
		t.Fatalf("process 200 %+v", p200)
	}
	if len(s.Hosts[1].Processes) != 1 {
		t.Fatalf("the tool's own process is shown: %+v", s.Hosts[1].Processes)
	}
}

// TestDBBye removes participants, then their empty process and host.
func TestDBBye(t *testing.T) {
	db := fixture(t)
	ch, err := db.Bye(bye(t, 5), t0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range ch {
		kinds = append(kinds, c.Kind.String())
	}
	if got := strings.Join(kinds, " "); got != "participant-removed process-removed" {
		t.Fatalf("changes %s", got)
	}
	if _, err := db.Bye([]byte{0xff}, t0); !errors.Is(err, ErrMalformed) {
		t.Fatalf("bad bye: %v", err)
	}
	if ch, _ := db.Bye(bye(t, 9), t0); len(ch) != 0 {
		t.Fatalf("unknown bye changed %v", ch)
	}
	if st := db.Stats(); st.Byes != 3 || st.Malformed != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestDBHelloChecks rejects Hellos lacking what the tree needs.
func TestDBHelloChecks(t *testing.T) {
	db := NewDB()
	for _, b := range [][]byte{
		{0x0a},
		hello(t, 1, 0, "", "/a/", "h", "1"),
		hello(t, 1, 0, "listener", "not a scope", "h", "1"),
		hello(t, 1, 0, "listener", "/a/", "", "1"),
	} {
		if _, err := db.Hello(b, t0); !errors.Is(err, ErrMalformed) {
			t.Errorf("%x: %v", b, err)
		}
	}
}

// TestWriteTreeGolden compares the object tree with testdata/tree.golden
// (RSBD_UPDATE_GOLDEN=1 rewrites it).
func TestWriteTreeGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTree(&buf, fixture(t).Snapshot(), t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	golden(t, "tree.golden", buf.Bytes())
}

// TestSnapshotJSON checks the rsb-tools-cl layout of the JSON form.
func TestSnapshotJSON(t *testing.T) {
	b, err := json.Marshal(fixture(t).Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Children []struct {
			Hostname string `json:"hostname"`
			Children []struct {
				PID      string `json:"process-id"`
				Children []struct {
					Kind  string `json:"kind"`
					Scope string `json:"scope"`
				} `json:"children"`
			} `json:"children"`
		} `json:"children"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Children) != 2 || v.Children[0].Children[0].PID != "100" ||
		v.Children[0].Children[0].Children[0].Kind != "listener" {
		t.Fatalf("json %s", b)
	}
}

// TestSearch finds nodes by words, with start and limit.
func TestSearch(t *testing.T) {
	s := fixture(t).Snapshot()
	for _, tc := range []struct {
		q            string
		start, limit int
		want         []string
	}{
		{"listener", 0, 0, []string{"participant", "participant"}},
		{"host-h2", 0, 0, []string{"host"}},
		{"prog-200 robot", 0, 0, []string{"process"}},
		{"/robot/arm", 0, 0, []string{"participant", "participant"}},
		{"/robot/", 1, 2, []string{"participant", "participant"}},
		{"nothing-like-this", 0, 0, nil},
	} {
		ms, err := Search(s, tc.q, tc.start, tc.limit)
		if err != nil {
			t.Fatalf("%q: %v", tc.q, err)
		}
		var kinds []string
		for _, m := range ms {
			kinds = append(kinds, m.Kind)
		}
		if strings.Join(kinds, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q: %v, want %v", tc.q, kinds, tc.want)
		}
	}
	for _, q := range []string{"", "  ", "//host[@id='x']"} {
		if _, err := Search(s, q, 0, 0); !errors.Is(err, ErrQuery) {
			t.Errorf("%q: %v", q, err)
		}
	}
	if _, err := Search(s, "listener", 5, 0); !errors.Is(err, ErrQuery) {
		t.Errorf("start past the matches: %v", err)
	}
}

// FuzzDB feeds arbitrary Hellos and Byes to a DB: it never panics, keeps
// its bounds, and its snapshot encodes and prints.
func FuzzDB(f *testing.F) {
	f.Add(hello(f, 1, 0, "listener", "/a/", "h", "1"), bye(f, 1))
	f.Add(hello(f, 2, 2, "local-server", "/", "h", "2"), []byte{0x0a, 0x10})
	f.Add([]byte{0x0a, 0xff, 0xff}, []byte{})
	f.Fuzz(func(t *testing.T, h, b []byte) {
		db := NewDB()
		db.Hello(h, t0)
		db.Echo(ProcessRef{"h", "1"}, Sample{1, 2, 3, 4}, t0)
		s := db.Snapshot()
		if _, err := json.Marshal(s); err != nil {
			t.Fatal(err)
		}
		if err := WriteTree(&bytes.Buffer{}, s, t0); err != nil {
			t.Fatal(err)
		}
		db.Bye(b, t0)
		if len(db.byID) > maxParticipants || len(db.hosts) > maxHosts {
			t.Fatal("bounds exceeded")
		}
	})
}

// FuzzParseDaemonStatus checks that any reply decodes or fails cleanly.
func FuzzParseDaemonStatus(f *testing.F) {
	f.Add([]byte(`{"name":"d1","peers":[{"name":"d2"}],"drops":{"x":1}}`))
	f.Add([]byte(`{"name":""}`))
	f.Add([]byte(`{"name":"d1","received-groups":[{"address":"239.255.0.1:7000","scopes":["/a/"]}],` +
		`"sent-groups":[{"address":"239.255.0.2:7000"}],"scopes":[{"scope":"/a/b/","published-events":3},{"scope":"(other)"}]}`))
	f.Add([]byte(`[1,2`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseDaemonStatus(data)
		if err == nil && (st.Name == "" || len(st.Peers) > maxDaemons || len(st.Scopes) > maxStatusScopes ||
			len(st.Received) > maxStatusScopes || len(st.Sent) > maxStatusScopes) {
			t.Fatalf("accepted %+v", st)
		}
		if err == nil {
			WriteDaemons(&bytes.Buffer{}, []DaemonStatus{st}, t0)
		}
	})
}

// golden compares got with testdata/name, rewriting it with
// RSBD_UPDATE_GOLDEN=1.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("RSBD_UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
