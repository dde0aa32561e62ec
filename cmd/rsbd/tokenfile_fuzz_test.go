package main

import (
	"testing"

	"github.com/rsbd/rsbd/mesh/cloudevents"
)

// FuzzParseTokenFile: no token file panics the parser, and every list it
// accepts is a valid token configuration of the gateway as a whole.
func FuzzParseTokenFile(f *testing.F) {
	for _, seed := range []string{
		"robot-secret pub=/robot/ sub=/robot/\n",
		"# comment\n\ndash sub=/robot/arm/,/x/\n",
		"t pub=\n", "t other=/a/\n", "t pub=/a/ pub=/b/ sub=relative\n", "\x00 pub=/\xff/\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tokens, err := parseTokenFile(b)
		if err != nil {
			return
		}
		if err := (cloudevents.Config{Tokens: tokens}).Validate(); err != nil && len(tokens) > 0 {
			// Lines validate one by one; a repeated token is the one way a
			// whole list can still be refused.
			seen := map[string]bool{}
			for _, tk := range tokens {
				if seen[tk.Value] {
					return
				}
				seen[tk.Value] = true
			}
			t.Fatalf("accepted %d tokens the gateway refuses: %v", len(tokens), err)
		}
	})
}
