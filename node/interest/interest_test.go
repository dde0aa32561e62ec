package interest

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// TestRepeatsOnlyUnderLingeringScopes: while /a/ lingers, events on /a/
// and below may repeat, others not; once its linger is over, none.
func TestRepeatsOnlyUnderLingeringScopes(t *testing.T) {
	var l Linger
	now := time.Unix(1_700_000_000, 0)
	if !l.Narrow([]scope.Scope{scope.MustParse("/a/")}, nil, now.Add(time.Second)) {
		t.Fatal("giving /a/ up did not narrow")
	}
	l.Accepted(now, nil)
	for sc, want := range map[string]bool{"/a/": true, "/a/b/": true, "/": false, "/b/": false, "/ab/": false} {
		if got := l.Repeats(scope.MustParse(sc)); got != want {
			t.Errorf("Repeats(%s) = %v, want %v", sc, got, want)
		}
	}
	l.Accepted(now.Add(time.Second), nil)
	if l.Repeats(scope.MustParse("/a/b/")) {
		t.Error("Repeats with nothing lingering")
	}
}

// TestMinimalScopes: the result equals the quadratic definition (no scope
// contained in another, every input covered) on random lists.
func TestMinimalScopes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		in := make([]scope.Scope, r.IntN(30))
		for i := range in {
			in[i] = testutil.RandomScope(r)
		}
		orig := slices.Clone(in)
		got := Minimal(in)
		for i, a := range got {
			for j, b := range got {
				if i != j && a.Contains(b) {
					t.Fatalf("%v: %s contains %s", orig, a, b)
				}
			}
		}
		for _, s := range orig {
			if !Covered(got, s) || !NewSet(got).Covers(s) {
				t.Fatalf("%v: %s not covered by %v", orig, s, got)
			}
		}
	}
}
