package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// builds holds what Build and BuildMain produced in this test binary.
var builds struct {
	mu  sync.Mutex
	dir string // temporary directory of the executables; "" before the first build
	// done maps an import path to its executable, or to its build error.
	done map[string]buildResult
}

type buildResult struct {
	path string
	err  error
}

// Build compiles the main package pkg (an import path) once per test
// binary, without the race detector, and returns the path of the
// executable; a failed build fails the test, and every later Build of pkg
// fails the same way at once. Call RemoveBinaries from TestMain.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	path, err := BuildMain(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// BuildMain is Build for TestMain, where no test can fail: it returns the
// build's error (with the compiler's output) instead.
func BuildMain(pkg string) (string, error) {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if r, ok := builds.done[pkg]; ok {
		return r.path, r.err
	}
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "rsbd-testutil-")
		if err != nil {
			return "", err
		}
		builds.dir, builds.done = dir, map[string]buildResult{}
	}
	// A directory per package keeps the executable's own name (its usage
	// messages show it) without clashes between packages of one name.
	r := buildResult{path: filepath.Join(builds.dir, strconv.Itoa(len(builds.done)), filepath.Base(pkg))}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o755); err != nil {
		return "", err
	}
	if out, err := exec.Command("go", "build", "-o", r.path, pkg).CombinedOutput(); err != nil {
		r = buildResult{err: fmt.Errorf("go build %s: %v\n%s", pkg, err, out)}
	}
	builds.done[pkg] = r
	return r.path, r.err
}

// RemoveBinaries deletes what Build and BuildMain produced; a later Build
// compiles again.
func RemoveBinaries() {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
		builds.dir, builds.done = "", nil
	}
}
