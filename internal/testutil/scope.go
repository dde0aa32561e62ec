package testutil

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/rsbd/rsbd/scope"
)

// RandomScope returns a scope of 0 to 5 components from a small alphabet,
// so that random scopes often contain one another.
func RandomScope(r *rand.Rand) scope.Scope {
	var b strings.Builder
	b.WriteByte('/')
	for range r.IntN(6) {
		fmt.Fprintf(&b, "%c/", 'a'+r.IntN(3))
	}
	return scope.MustParse(b.String())
}
