package mesh

import (
	"errors"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/scope"
)

// TestTokenLookup checks Lookup finds a token among tokens of other
// lengths by its digest, and neither a prefix nor an extension of a token.
func TestTokenLookup(t *testing.T) {
	ts, err := ParseTokens([]Token{{Value: "short"}, {Value: strings.Repeat("long", 64), Publish: []string{"/l/"}}, {Value: "mid-length"}})
	if err != nil {
		t.Fatal(err)
	}
	if gr := ts.Lookup(strings.Repeat("long", 64)); gr != &ts.grants[1] || len(gr.pub) != 1 {
		t.Errorf("long token: %v", gr)
	}
	if gr := ts.Lookup("short"); gr != &ts.grants[0] {
		t.Errorf("short token: %v", gr)
	}
	for _, bad := range []string{"", "shor", "shortt", "mid-length ", strings.Repeat("long", 63)} {
		if gr := ts.Lookup(bad); gr != nil {
			t.Errorf("%q matched", bad)
		}
	}
	var none *Tokens
	if none.Required() || none.Lookup("short") != nil || !ts.Required() {
		t.Error("Required or Lookup on a nil set")
	}
}

// TestGrant checks a grant's prefixes: publishing and subscribing within
// them, a subscription wider than a prefix refused, a nil grant allowed.
func TestGrant(t *testing.T) {
	ts, err := ParseTokens([]Token{{Value: "t", Publish: []string{"/robot/"}, Subscribe: []string{"/robot/arm/"}}})
	if err != nil {
		t.Fatal(err)
	}
	gr := ts.Lookup("t")
	sc := scope.MustParse
	if !gr.MayPublish(sc("/robot/leg/")) || gr.MayPublish(sc("/other/")) {
		t.Error("publish prefixes")
	}
	if !gr.MaySubscribe(sc("/robot/arm/x/")) || gr.MaySubscribe(sc("/robot/")) {
		t.Error("subscribe prefixes")
	}
	var none *Grant
	if !none.MayPublish(sc("/any/")) || !none.MaySubscribe(sc("/")) {
		t.Error("a nil grant refuses")
	}
}

// TestParseTokensErrors checks bad token sets fail with ErrBadToken
// without naming the token.
func TestParseTokensErrors(t *testing.T) {
	for _, tokens := range [][]Token{{{Value: ""}}, {{Value: "a b"}}, {{Value: "x\x7f"}}, {{Value: "dup"}, {Value: "dup"}},
		{{Value: "secret", Publish: []string{"no-slash"}}}} {
		_, err := ParseTokens(tokens)
		if !errors.Is(err, ErrBadToken) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: %v", tokens, err)
		}
	}
}
