package scope

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"/", "/"},
		{"/a", "/a/"},
		{"/a/", "/a/"},
		{"/a/b", "/a/b/"},
		{"/a/b/", "/a/b/"},
		{"/Foo-Bar_09/x", "/Foo-Bar_09/x/"},
		{"/__rsb/introspection/participants/", "/__rsb/introspection/participants/"},
		{"/-/_/", "/-/_/"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got.String() != tt.want {
				t.Fatalf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got.IsZero() {
				t.Fatalf("Parse(%q) is zero", tt.in)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name, in string
		wantMsg  string // substring of the error message
	}{
		{"empty", "", "empty string"},
		{"no leading slash", "a/b/", "does not start with '/'"},
		{"double slash", "/a//b/", "empty component (//) at byte 3"},
		{"leading double slash", "//", "empty component (//) at byte 1"},
		{"space", "/a b/", `character " " at byte 2`},
		{"dot", "/a/b.c", `character "." at byte 4`},
		{"non-ascii", "/ä/", `character "\xc3" at byte 1`},
		{"nul", "/a\x00/", `character "\x00" at byte 2`},
		{"backslash", `/a\b`, `character "\\" at byte 2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want error", tt.in, got)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalid", tt.in, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Parse(%q) error %q does not contain %q", tt.in, err, tt.wantMsg)
			}
			if !got.IsZero() {
				t.Fatalf("Parse(%q) returned non-zero scope %q with error", tt.in, got)
			}
		})
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("MustParse of an invalid scope did not panic")
		}
	}()
	MustParse("no-slash")
}

func TestZeroAndRoot(t *testing.T) {
	var z Scope
	if !z.IsZero() || z.String() != "" {
		t.Fatalf("zero Scope: IsZero %v, String %q", z.IsZero(), z.String())
	}
	if Root.IsZero() || Root.String() != "/" || Root != MustParse("/") {
		t.Fatalf("Root = %q", Root)
	}
	if z.Contains(Root) || Root.IsSubScopeOf(z) || z.IsSubScopeOf(Root) {
		t.Fatal("zero Scope takes part in the scope relations")
	}
	if got := z.SuperScopes(true); len(got) != 0 {
		t.Fatalf("zero SuperScopes = %v", got)
	}
}

func TestComponents(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"/", nil},
		{"/a/", []string{"a"}},
		{"/a/bc/d-e/", []string{"a", "bc", "d-e"}},
	}
	for _, tt := range tests {
		if got := MustParse(tt.in).Components(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Components(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSuperScopes(t *testing.T) {
	tests := []struct {
		in          string
		includeSelf bool
		want        []string
	}{
		{"/", false, []string{}},
		{"/", true, []string{"/"}},
		{"/a/", false, []string{"/"}},
		{"/a/b/", false, []string{"/", "/a/"}},
		{"/a/b/", true, []string{"/", "/a/", "/a/b/"}},
		{"/x/yy/zzz/", true, []string{"/", "/x/", "/x/yy/", "/x/yy/zzz/"}},
	}
	for _, tt := range tests {
		got := MustParse(tt.in).SuperScopes(tt.includeSelf)
		strs := make([]string, 0, len(got))
		for _, s := range got {
			strs = append(strs, s.String())
		}
		if !reflect.DeepEqual(strs, tt.want) {
			t.Errorf("SuperScopes(%q, %v) = %q, want %q", tt.in, tt.includeSelf, strs, tt.want)
		}
		if got := MustParse(tt.in).AppendSuperScopes([]Scope{Root}, tt.includeSelf); len(got) != len(tt.want)+1 || got[0] != Root {
			t.Errorf("AppendSuperScopes(%q) did not append to dst: %v", tt.in, got)
		}
	}
}

func TestAppendSuperScopesAllocs(t *testing.T) {
	s := MustParse("/a/b/c/d/")
	dst := make([]Scope, 0, 8)
	allocs := testing.AllocsPerRun(100, func() {
		dst = s.AppendSuperScopes(dst[:0], true)
	})
	if allocs != 0 {
		t.Fatalf("AppendSuperScopes allocates %v times per call", allocs)
	}
}

func TestRelations(t *testing.T) {
	tests := []struct {
		s, o             string
		subScope, contns bool // s.IsSubScopeOf(o), o.Contains(s)
	}{
		{"/a/b/", "/a/", true, true},
		{"/a/b/", "/", true, true},
		{"/a/b/", "/a/b/", false, true},
		{"/", "/", false, true},
		{"/a/", "/a/b/", false, false},
		{"/ab/", "/a/", false, false},
		{"/a/bc/", "/a/b/", false, false},
		{"/b/", "/a/", false, false},
		{"/a/b/c/", "/a/", true, true},
	}
	for _, tt := range tests {
		s, o := MustParse(tt.s), MustParse(tt.o)
		if got := s.IsSubScopeOf(o); got != tt.subScope {
			t.Errorf("%s.IsSubScopeOf(%s) = %v, want %v", s, o, got, tt.subScope)
		}
		if got := o.Contains(s); got != tt.contns {
			t.Errorf("%s.Contains(%s) = %v, want %v", o, s, got, tt.contns)
		}
	}
}

func TestConcat(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"/", "/", "/"},
		{"/a/", "/", "/a/"},
		{"/", "/b/", "/b/"},
		{"/a/", "/b/c/", "/a/b/c/"},
		{"/a/b/", "/c/", "/a/b/c/"},
	}
	for _, tt := range tests {
		got := MustParse(tt.a).Concat(MustParse(tt.b))
		if got.String() != tt.want {
			t.Errorf("%s.Concat(%s) = %s, want %s", tt.a, tt.b, got, tt.want)
		}
		if _, err := Parse(got.String()); err != nil {
			t.Errorf("Concat result %q does not parse: %v", got, err)
		}
	}
	if got := (Scope{}).Concat(Scope{}); got != Root {
		t.Errorf("zero.Concat(zero) = %q, want /", got)
	}
}

func TestIsReserved(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"/__rsb/", true},
		{"/__rsb", true},
		{"/__rsb/introspection/participants/", true},
		{"/__rsbx/", false},
		{"/a/__rsb/", false},
		{"/", false},
	}
	for _, tt := range tests {
		if got := MustParse(tt.in).IsReserved(); got != tt.want {
			t.Errorf("IsReserved(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestComponentFromText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"abc-DEF_019", "abc-DEF_019"},
		{"host.example.org", "host_example_org"},
		{"a b/c", "a_b_c"},
		{"grüße", "gr__e"},
		{"\xff\xfe", "__"},
	}
	for _, tt := range tests {
		got := ComponentFromText(tt.in)
		if got != tt.want {
			t.Errorf("ComponentFromText(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got != "" {
			if _, err := Parse("/" + got + "/"); err != nil {
				t.Errorf("component %q does not parse: %v", got, err)
			}
		}
	}
}

var validRE = regexp.MustCompile(`^/([-_a-zA-Z0-9]+/)*$`)

// TestParseEveryByte: Parse accepts exactly the component characters, byte
// by byte, in the middle of a component.
func TestParseEveryByte(t *testing.T) {
	for c := range 256 {
		in := "/a" + string([]byte{byte(c)}) + "b/"
		_, err := Parse(in)
		valid := c == '/' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || c == '-' || c == '_'
		if (err == nil) != valid {
			t.Errorf("Parse(%q): error %v, want valid %v", in, err, valid)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "/", "/a", "/a/b/", "a/", "//", "/a//b", "/ä/", "/__rsb/x/", "/a b", "/a/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		normalized := in
		if !strings.HasSuffix(normalized, "/") {
			normalized += "/"
		}
		valid := in != "" && validRE.MatchString(normalized)
		if (err == nil) != valid {
			t.Fatalf("Parse(%q) error %v, regex valid %v", in, err, valid)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalid", in, err)
			}
			return
		}
		if s.String() != normalized {
			t.Fatalf("Parse(%q) = %q, want %q", in, s, normalized)
		}
		again, err := Parse(s.String())
		if err != nil || again != s {
			t.Fatalf("round trip of %q: %q, %v", s, again, err)
		}
		supers := s.SuperScopes(false)
		for _, sup := range supers {
			if !s.IsSubScopeOf(sup) || !sup.Contains(s) {
				t.Fatalf("%q is not below its super-scope %q", s, sup)
			}
		}
		if len(supers) != len(s.Components()) {
			t.Fatalf("%q has %d super-scopes and %d components", s, len(supers), len(s.Components()))
		}
	})
}

func BenchmarkParse(b *testing.B) {
	for _, in := range []string{"/robot/arm/joint-3/state/", "/robot/arm/joint-3/state"} {
		b.Run(in, func(b *testing.B) {
			for b.Loop() {
				if _, err := Parse(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendSuperScopes(b *testing.B) {
	s := MustParse("/robot/arm/joint-3/state/")
	dst := make([]Scope, 0, 8)
	for b.Loop() {
		dst = s.AppendSuperScopes(dst[:0], true)
	}
}

func BenchmarkContains(b *testing.B) {
	l, e := MustParse("/robot/arm/"), MustParse("/robot/arm/joint-3/state/")
	for b.Loop() {
		if !l.Contains(e) {
			b.Fatal("no match")
		}
	}
}

// BenchmarkParseVaried parses 1 000 scopes that differ in their last
// component, in turn, as a daemon sees them from a publisher that spreads
// its events over many scopes.
func BenchmarkParseVaried(b *testing.B) {
	raw := make([]string, 1000)
	for i := range raw {
		raw[i] = fmt.Sprintf("/bench/ls/0001/01000/%05d/", i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := Parse(raw[i%len(raw)]); err != nil {
			b.Fatal(err)
		}
	}
}
