package group

import (
	"fmt"
	"testing"

	"github.com/rsbd/rsbd/scope"
)

func TestNameVectors(t *testing.T) {
	// Group names of the RSB Spread transport, verified against rsb-cpp.
	cases := []struct{ scope, name string }{
		{"/", "6666cd76f96956469e7be39d750cc7d"},
		{"/foo/", "4f87be8f6e593d167f5fd1ab238cfc2"},
		{"/foo/bar/", "1c184f3891344400380281315d9e738"},
		{"/foo/bar", "1c184f3891344400380281315d9e738"}, // normalized by scope.Parse
	}
	for _, c := range cases {
		s := scope.MustParse(c.scope)
		if got := Name(s); got != c.name {
			t.Errorf("Name(%q) = %q, want %q", c.scope, got, c.name)
		}
		if got := NameOf(ID(s)); got != c.name {
			t.Errorf("NameOf(ID(%q)) = %q, want %q", c.scope, got, c.name)
		}
		if len(Name(s)) != NameLen {
			t.Errorf("len(Name(%q)) = %d", c.scope, len(Name(s)))
		}
	}
}

func TestIDIsFullDigest(t *testing.T) {
	id := ID(scope.Root)
	// MD5("/") = 6666cd76f96956469e7be39d750cc7d9; the name drops the last digit.
	want := GroupID{0x66, 0x66, 0xcd, 0x76, 0xf9, 0x69, 0x56, 0x46, 0x9e, 0x7b, 0xe3, 0x9d, 0x75, 0x0c, 0xc7, 0xd9}
	if id != want {
		t.Fatalf("ID(/) = %x, want %x", id, want)
	}
	if ID(scope.Scope{}) != want {
		t.Fatalf("ID(zero scope) = %x, want the root's id", ID(scope.Scope{}))
	}
}

func TestIDsRootFirst(t *testing.T) {
	s := scope.MustParse("/foo/bar/")
	ids := IDs(s)
	want := []GroupID{ID(scope.Root), ID(scope.MustParse("/foo/")), ID(s)}
	if len(ids) != len(want) {
		t.Fatalf("IDs = %d ids, want %d", len(ids), len(want))
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Errorf("IDs[%d] = %x, want %x", i, ids[i], want[i])
		}
	}
	// The result is the caller's: changing it must not change later results.
	ids[0] = GroupID{}
	if IDs(s)[0] != want[0] {
		t.Fatal("IDs returned the cached slice")
	}
	if got := IDs(scope.Root); len(got) != 1 || got[0] != want[0] {
		t.Fatalf("IDs(/) = %x", got)
	}
	if got := IDs(scope.Scope{}); len(got) != 1 || got[0] != want[0] {
		t.Fatalf("IDs(zero) = %x", got)
	}
}

func TestAppendIDsMatchesSuperScopes(t *testing.T) {
	resetIDCache()
	for _, str := range []string{"/", "/a/", "/a/b/c/d/e/", "/x_y/Z-9/"} {
		s := scope.MustParse(str)
		for round := 0; round < 2; round++ { // miss, then hit
			got := AppendIDs([]GroupID{{1}}, s)
			supers := s.SuperScopes(true)
			if len(got) != 1+len(supers) || got[0] != (GroupID{1}) {
				t.Fatalf("AppendIDs(%s) = %d ids, want 1+%d", s, len(got), len(supers))
			}
			for i, sup := range supers {
				if got[1+i] != ID(sup) {
					t.Errorf("AppendIDs(%s)[%d] = %x, want ID(%s)", s, i, got[1+i], sup)
				}
			}
		}
	}
}

func TestAppendIDsNoAllocWhenCached(t *testing.T) {
	s := scope.MustParse("/robot/arm/joint/")
	dst := make([]GroupID, 0, 8)
	AppendIDs(dst, s)
	allocs := testing.AllocsPerRun(100, func() { dst = AppendIDs(dst[:0], s) })
	if allocs != 0 {
		t.Fatalf("AppendIDs allocates %.1f times per call", allocs)
	}
}

func TestIDCacheBounded(t *testing.T) {
	resetIDCache()
	for i := 0; i < 3*idCacheSize; i++ {
		s := scope.MustParse(fmt.Sprintf("/bound/s%d/", i))
		if got := AppendIDs(nil, s); got[2] != ID(s) {
			t.Fatalf("wrong id for %s", s)
		}
	}
	n := 0
	idCache.m.Range(func(any, any) bool { n++; return true })
	if n > idCacheSize {
		t.Fatalf("cache holds %d entries, bound %d", n, idCacheSize)
	}
}

func BenchmarkID(b *testing.B) {
	s := scope.MustParse("/robot/arm/joint/")
	for b.Loop() {
		_ = ID(s)
	}
}

func BenchmarkName(b *testing.B) {
	s := scope.MustParse("/robot/arm/joint/")
	for b.Loop() {
		_ = Name(s)
	}
}

func BenchmarkAppendIDs(b *testing.B) {
	s := scope.MustParse("/robot/arm/joint/")
	dst := make([]GroupID, 0, 8)
	b.Run("cached", func(b *testing.B) {
		AppendIDs(dst, s)
		b.ReportAllocs()
		for b.Loop() {
			dst = AppendIDs(dst[:0], s)
		}
	})
	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			dst = append(dst[:0], computeIDs(s.String())...)
		}
	})
	b.Run("cached-parallel", func(b *testing.B) {
		AppendIDs(dst, s)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			d := make([]GroupID, 0, 8)
			for pb.Next() {
				d = AppendIDs(d[:0], s)
			}
		})
	})
}
