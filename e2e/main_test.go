package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// rsbdBin is the daemon binary TestMain builds for all tests.
var rsbdBin string

// TestMain builds cmd/rsbd once (without the race detector: the daemons are
// the system under test, the race detector runs on the packages' own tests),
// runs the tests and removes the binary.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rsbd-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	rsbdBin = filepath.Join(dir, "rsbd")
	build := exec.Command("go", "build", "-o", rsbdBin, "github.com/rsbd/rsbd/cmd/rsbd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building rsbd:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
