package rsbsocket

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/scope"
)

// observeFrame parses body and feeds it to p.
func observeFrame(t *testing.T, p *participants, body []byte) introspectionResult {
	t.Helper()
	f, err := frame.ParseFrame(body)
	if err != nil {
		t.Fatal(err)
	}
	return p.observe(&f)
}

// scopes parses scope strings.
func scopes(ss ...string) []scope.Scope {
	out := make([]scope.Scope, len(ss))
	for i, s := range ss {
		out[i] = scope.MustParse(s)
	}
	return out
}

func TestParticipantsInterest(t *testing.T) {
	intro := IntrospectionScope.String()
	tests := []struct {
		name       string
		defaultAll bool
		frames     func(t *testing.T) [][]byte
		want       Interest
	}{
		{"nothing announced", true, func(*testing.T) [][]byte { return nil }, Interest{All: true}},
		{"nothing announced, none", false, func(*testing.T) [][]byte { return nil }, Interest{}},
		{"informer only", true, func(t *testing.T) [][]byte {
			return [][]byte{socktest.Hello(t, socktest.UUID(1), "informer", "/a/")}
		}, Interest{All: true}},
		{"informer only, none", false, func(t *testing.T) [][]byte {
			return [][]byte{socktest.Hello(t, socktest.UUID(1), "informer", "/a/")}
		}, Interest{Scopes: scopes(intro)}},
		{"listener", true, func(t *testing.T) [][]byte {
			return [][]byte{socktest.Hello(t, socktest.UUID(1), "listener", "/a/"), socktest.Hello(t, socktest.UUID(2), "informer", "/b/")}
		}, Interest{Scopes: scopes(intro, "/a/")}},
		{"servers and reader", true, func(t *testing.T) [][]byte {
			return [][]byte{
				socktest.Hello(t, socktest.UUID(1), "local-server", "/rpc/svc/"),
				socktest.Hello(t, socktest.UUID(2), "remote-server", "/rpc/other/"),
				socktest.Hello(t, socktest.UUID(3), "reader", "/r/"),
				socktest.Hello(t, socktest.UUID(4), "local-method", "/rpc/svc/echo/"), // contained in /rpc/svc/
			}
		}, Interest{Scopes: scopes(intro, "/r/", "/rpc/other/", "/rpc/svc/")}},
		{"old class-name kinds", true, func(t *testing.T) [][]byte {
			return [][]byte{socktest.Hello(t, socktest.UUID(1), "Informer", "/i/"), socktest.Hello(t, socktest.UUID(2), "LocalServer", "/s/")}
		}, Interest{Scopes: scopes(intro, "/s/")}},
		{"listener on root", true, func(t *testing.T) [][]byte {
			return [][]byte{socktest.Hello(t, socktest.UUID(1), "listener", "/a/"), socktest.Hello(t, socktest.UUID(2), "listener", "/")}
		}, Interest{Scopes: scopes("/")}},
		{"bye", true, func(t *testing.T) [][]byte {
			return [][]byte{socktest.Hello(t, socktest.UUID(1), "listener", "/a/"), socktest.Hello(t, socktest.UUID(2), "listener", "/b/"), socktest.Bye(t, socktest.UUID(1))}
		}, Interest{Scopes: scopes(intro, "/b/")}},
		{"bye of the last listener", true, func(t *testing.T) [][]byte {
			return [][]byte{socktest.Hello(t, socktest.UUID(1), "listener", "/a/"), socktest.Bye(t, socktest.UUID(1))}
		}, Interest{All: true}},
		{"hello re-sent after survey changes scope", true, func(t *testing.T) [][]byte {
			return [][]byte{socktest.Hello(t, socktest.UUID(1), "listener", "/a/"), socktest.Hello(t, socktest.UUID(1), "listener", "/c/")}
		}, Interest{Scopes: scopes(intro, "/c/")}},
		{"hello off the participants scope", true, func(t *testing.T) [][]byte {
			b := socktest.Hello(t, socktest.UUID(1), "listener", "/a/")
			f, _ := frame.ParseFrame(b)
			return [][]byte{socktest.Notification(t, "/elsewhere/", HelloWireSchema, f.Data, 0)}
		}, Interest{All: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newParticipants(10, tt.defaultAll)
			for _, b := range tt.frames(t) {
				observeFrame(t, p, b)
			}
			if got := p.interest(); !sameInterest(got, tt.want) {
				t.Fatalf("interest = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParticipantsResults(t *testing.T) {
	p := newParticipants(2, true)
	steps := []struct {
		body []byte
		want introspectionResult
	}{
		{socktest.PythonFrame, introNone},
		{socktest.Hello(t, socktest.UUID(1), "listener", "/a/"), introChanged},
		{socktest.Hello(t, socktest.UUID(1), "listener", "/a/"), introNone}, // survey reply: same participant
		{socktest.Notification(t, socktest.ParticipantScope(socktest.UUID(3)), HelloWireSchema, []byte{0xff}, 0), introBad},
		{socktest.Hello(t, socktest.UUID(3), "listener", "not a scope"), introBad},
		{socktest.Hello(t, socktest.UUID(3), "", "/a/"), introBad},
		{socktest.Notification(t, socktest.ParticipantScope(socktest.UUID(3)), ByeWireSchema, nil, 0), introBad},
		{socktest.Bye(t, socktest.UUID(9)), introNone},
		{socktest.Hello(t, socktest.UUID(2), "listener", "/b/"), introChanged},
		{socktest.Hello(t, socktest.UUID(3), "listener", "/c/"), introOverflow},
	}
	for i, st := range steps {
		if got := observeFrame(t, p, st.body); got != st.want {
			t.Fatalf("step %d: result %d, want %d", i, got, st.want)
		}
	}
	if got := p.interest(); !got.All {
		t.Fatalf("after overflow interest = %v, want all", got)
	}
}

func TestIsListeningKind(t *testing.T) {
	for kind, want := range map[string]bool{
		"informer": false, "Informer": false, "INFORMER": false, "in-former": false,
		"listener": true, "reader": true, "local-server": true, "remote-server": true,
		"informers": true, "inform": true, "": true, "informer\x00": true,
	} {
		if got := isListeningKind(kind); got != want {
			t.Errorf("isListeningKind(%q) = %v, want %v", kind, got, want)
		}
	}
}

// TestSocktestNames: the introspection names the shared test fixtures
// build Hellos and Byes with are this package's.
func TestSocktestNames(t *testing.T) {
	if socktest.ParticipantsScope != ParticipantsScope.String() || socktest.HelloWireSchema != HelloWireSchema ||
		socktest.ByeWireSchema != ByeWireSchema {
		t.Fatal("socktest's introspection names differ from rsbsocket's")
	}
}

func TestMinimalScopes(t *testing.T) {
	got := minimalScopes(scopes("/b/c/", "/a/", "/b/", "/a/x/", "/a/", "/ab/"))
	want := scopes("/a/", "/ab/", "/b/")
	if !slices.Equal(got, want) {
		t.Fatalf("minimalScopes = %v, want %v", got, want)
	}
}

func TestMatcherSetAgreesWithLinear(t *testing.T) {
	var ss []string
	for i := range 3 * linearInterestMax {
		ss = append(ss, fmt.Sprintf("/s%d/", i), fmt.Sprintf("/t/u%d/", i))
	}
	in := Interest{Scopes: minimalScopes(scopes(ss...))}
	m := newMatcher(in)
	if m.set == nil {
		t.Fatal("expected the set form")
	}
	probes := scopes("/", "/s0/", "/s0/x/y/", "/s99/", "/t/", "/t/u3/", "/t/u3/v/", "/t/u333/",
		"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/")
	for _, sc := range probes {
		if got, want := m.matches(sc), in.Matches(sc); got != want {
			t.Errorf("matches(%v) = %v, linear %v", sc, got, want)
		}
	}
	if !newMatcher(Interest{All: true}).matches(scope.Root) || newMatcher(Interest{}).matches(scope.Root) {
		t.Fatal("all/none matcher wrong")
	}
}

// FuzzParticipants feeds arbitrary frames, and Hellos and Byes built from
// fuzzed fields, to the interest tracker and checks its invariants.
func FuzzParticipants(f *testing.F) {
	f.Add(socktest.Hello(f, socktest.UUID(1), "listener", "/a/"), byte(1), "listener", "/a/b/")
	f.Add(socktest.Bye(f, socktest.UUID(1)), byte(1), "informer", "/")
	f.Add(socktest.PythonFrame, byte(2), "local-server", "/rpc/")
	f.Add([]byte{}, byte(0), "", "")
	f.Fuzz(func(t *testing.T, raw []byte, id byte, kind, sc string) {
		const limit = 3
		p := newParticipants(limit, id%2 == 0)
		feed := func(body []byte) {
			if fr, err := frame.ParseFrame(body); err == nil {
				p.observe(&fr)
			}
		}
		feed(raw)
		for i := range 4 {
			feed(socktest.Hello(t, socktest.UUID(id+byte(i)), kind, sc))
		}
		feed(socktest.Bye(t, socktest.UUID(id)))
		feed(raw)
		if p.count() > limit {
			t.Fatalf("%d participants tracked, limit %d", p.count(), limit)
		}
		in := p.interest()
		if in.All && len(in.Scopes) > 0 {
			t.Fatal("interest both all and scoped")
		}
		if got := minimalScopes(slices.Clone(in.Scopes)); !slices.Equal(got, in.Scopes) {
			t.Fatalf("interest scopes not minimal: %v", in.Scopes)
		}
	})
}

// TestParticipantsInlineThenMap: the first participant is kept inline, a
// second moves both into the map, and either way Hello, repeated Hello,
// changed Hello and Bye give the same results and interest.
func TestParticipantsInlineThenMap(t *testing.T) {
	p := newParticipants(3, false)
	data := func(body []byte) []byte {
		t.Helper()
		f, err := frame.ParseFrame(body)
		if err != nil {
			t.Fatal(err)
		}
		return f.Data
	}
	hello := func(id byte, kind, sc string) introspectionResult {
		t.Helper()
		return p.hello(data(socktest.Hello(t, socktest.UUID(id), kind, sc)))
	}
	bye := func(id byte) introspectionResult {
		t.Helper()
		return p.bye(data(socktest.Bye(t, socktest.UUID(id))))
	}
	scopes := func() []string {
		var out []string
		for _, sc := range p.interest().Scopes {
			out = append(out, sc.String())
		}
		return out
	}
	steps := []struct {
		do    func() introspectionResult
		want  introspectionResult
		count int
		inter []string
	}{
		{func() introspectionResult { return hello(1, "listener", "/a/") }, introChanged, 1, []string{"/__rsb/introspection/", "/a/"}},
		{func() introspectionResult { return hello(1, "listener", "/a/") }, introNone, 1, []string{"/__rsb/introspection/", "/a/"}},
		{func() introspectionResult { return hello(1, "listener", "/b/") }, introChanged, 1, []string{"/__rsb/introspection/", "/b/"}},
		{func() introspectionResult { return bye(2) }, introNone, 1, []string{"/__rsb/introspection/", "/b/"}},
		{func() introspectionResult { return hello(2, "informer", "/c/") }, introChanged, 2, []string{"/__rsb/introspection/", "/b/"}},
		{func() introspectionResult { return hello(3, "listener", "/d/") }, introChanged, 3, []string{"/__rsb/introspection/", "/b/", "/d/"}},
		{func() introspectionResult { return bye(1) }, introChanged, 2, []string{"/__rsb/introspection/", "/d/"}},
		{func() introspectionResult { return bye(3) }, introChanged, 1, []string{"/__rsb/introspection/"}},
		{func() introspectionResult { return bye(2) }, introChanged, 0, nil},
	}
	for i, st := range steps {
		if got := st.do(); got != st.want || p.count() != st.count || !slices.Equal(scopes(), st.inter) {
			t.Fatalf("step %d: result %v (want %v), %d participants (want %d), interest %v (want %v)",
				i, got, st.want, p.count(), st.count, scopes(), st.inter)
		}
	}
}
