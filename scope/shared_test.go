package scope

import (
	"bytes"
	"testing"
	"unsafe"
)

// shares reports whether sc's bytes lie in b.
func shares(sc Scope, b []byte) bool {
	if len(b) == 0 || len(sc.s) == 0 {
		return false
	}
	p, start := uintptr(unsafe.Pointer(unsafe.StringData(sc.s))), uintptr(unsafe.Pointer(&b[0]))
	return p >= start && p < start+uintptr(len(b))
}

// TestParseShared: a normalized scope shares the buffer it was parsed
// from; one without its trailing slash, and every error, holds memory of
// its own; Clone shares nothing.
func TestParseShared(t *testing.T) {
	b := []byte("/robot/arm/")
	sc, err := ParseShared(b)
	if err != nil || sc.String() != "/robot/arm/" || !shares(sc, b) {
		t.Fatalf("ParseShared(%q) = %v, %v, shared %v", b, sc, err, shares(sc, b))
	}
	c := Clone(sc)
	if c != sc || shares(c, b) {
		t.Fatalf("Clone = %v, shared %v", c, shares(c, b))
	}
	short := []byte("/robot/arm")
	if sc, err := ParseShared(short); err != nil || sc.String() != "/robot/arm/" || shares(sc, short) {
		t.Fatalf("ParseShared(%q) = %v, %v", short, sc, err)
	}
	bad := []byte("/robot//arm/")
	_, err = ParseShared(bad)
	if err == nil {
		t.Fatal("invalid scope accepted")
	}
	msg := err.Error()
	copy(bad, "/xxxxxxxxxx/")
	if err.Error() != msg {
		t.Fatalf("the error shares its input: %q became %q", msg, err.Error())
	}
	for _, in := range [][]byte{nil, {}, []byte("/")} {
		got, err := ParseShared(in)
		want, wantErr := Parse(string(in))
		if got != want || (err == nil) != (wantErr == nil) {
			t.Fatalf("ParseShared(%q) = %v, %v; Parse gives %v, %v", in, got, err, want, wantErr)
		}
	}
}

// FuzzParseShared: ParseShared returns what Parse returns for any input.
func FuzzParseShared(f *testing.F) {
	for _, s := range []string{"/", "/a/b/", "/a/b", "a/", "/a//", "", "/é/"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		b := bytes.Clone(in)
		want, wantErr := Parse(string(in))
		got, err := ParseShared(b)
		if got != want || (err == nil) != (wantErr == nil) {
			t.Fatalf("ParseShared(%q) = %v, %v; Parse gives %v, %v", in, got, err, want, wantErr)
		}
	})
}
