package testutil

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GoldenHex reads the golden vector testdata/golden/name of the package
// under test: hex digits, white space between them ignored, '#' starting
// a comment to the end of the line. A missing file or a bad digit fails
// the test.
func GoldenHex(t testing.TB, name string) []byte {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	var digits strings.Builder
	for line := range strings.Lines(string(text)) {
		line, _, _ = strings.Cut(line, "#")
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}
