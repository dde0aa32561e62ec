package testutil

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Program returns the path of the first of names found in PATH, for a test
// that runs a program the Debian package pkg installs (make deps installs
// every one the tests use). Without any the test is skipped with a message
// on a developer's machine, and fails when CI=true: a skipped test proves
// nothing.
func Program(t testing.TB, pkg string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found (CI=true needs it): make deps, or apt-get install -y %s", strings.Join(names, " or "), pkg)
	}
	t.Skipf("%s not found: make deps, or apt-get install -y %s, to run this test", strings.Join(names, " or "), pkg)
	return ""
}
