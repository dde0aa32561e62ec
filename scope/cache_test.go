package scope

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestCacheParseBytes: the cache returns what Parse returns, for valid and
// invalid scopes, with and without the trailing slash, and serves repeated
// scopes without allocating.
func TestCacheParseBytes(t *testing.T) {
	var c Cache
	for _, s := range []string{"/a/b/", "/a/b", "/", "/x/", "bad", "", "/a//b/", "/a/b/", "/a/b", "/" + strings.Repeat("l", 300) + "/"} {
		want, wantErr := Parse(s)
		for range 2 {
			got, err := c.ParseBytes([]byte(s))
			if got != want || (err == nil) != (wantErr == nil) || (err != nil && !errors.Is(err, ErrInvalid)) {
				t.Fatalf("ParseBytes(%q) = %v, %v; Parse gives %v, %v", s, got, err, want, wantErr)
			}
		}
	}
	raw := [][]byte{[]byte("/r/1/"), []byte("/r/2"), []byte("/r/3/"), []byte("/r/4/")}
	for _, b := range raw {
		if _, err := c.ParseBytes(b); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, b := range raw {
			if _, err := c.ParseBytes(b); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per round of cached scopes", allocs)
	}
}

// TestCacheSkipsLongScopes: a scope longer than maxCachedLen is parsed
// every time and never kept.
func TestCacheSkipsLongScopes(t *testing.T) {
	var c Cache
	long := "/" + strings.Repeat("x", maxCachedLen) + "/"
	for range 2 {
		if sc, err := c.ParseBytes([]byte(long)); err != nil || sc.String() != long {
			t.Fatalf("long scope: %v, %v", sc, err)
		}
	}
	for _, e := range c.entries {
		if !e.sc.IsZero() {
			t.Fatalf("cached %q", e.raw)
		}
	}
}

// FuzzCacheParseBytes: a Cache fed any sequence of inputs (one input split
// at its NUL bytes) returns for each what Parse returns.
func FuzzCacheParseBytes(f *testing.F) {
	f.Add([]byte("/a/b/\x00/a/b\x00/\x00/a/b/"))
	f.Add([]byte("bad\x00/x//\x00\x00/" + strings.Repeat("y", 300)))
	f.Fuzz(func(t *testing.T, in []byte) {
		var c Cache
		for _, b := range bytes.Split(in, []byte{0}) {
			want, wantErr := Parse(string(b))
			got, err := c.ParseBytes(b)
			if got != want || (err == nil) != (wantErr == nil) {
				t.Fatalf("ParseBytes(%q) = %v, %v; Parse gives %v, %v", b, got, err, want, wantErr)
			}
		}
	})
}
