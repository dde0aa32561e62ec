package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
)

// rsbdBin is the daemon binary TestMain builds for all tests.
var rsbdBin string

// TestMain builds cmd/rsbd once (without the race detector: the daemons are
// the system under test, the race detector runs on the packages' own tests),
// runs the tests and removes the binary.
func TestMain(m *testing.M) {
	bin, err := testutil.BuildMain("github.com/rsbd/rsbd/cmd/rsbd")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building rsbd:", err)
		testutil.RemoveBinaries()
		os.Exit(1)
	}
	rsbdBin = bin
	code := m.Run()
	testutil.RemoveBinaries()
	os.Exit(code)
}
