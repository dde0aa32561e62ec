package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/rsbd/rsbd/client/clienttest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	clienttest.RemoveBinaries()
	os.Exit(code)
}

func bg() context.Context { return context.Background() }

// result is what one tool invocation produced.
type result struct {
	code        int
	stdout      string
	stderr      string
	stdoutBytes []byte
}

// runTool runs the tool in-process with the given stdin.
func runTool(ctx context.Context, stdin string, args ...string) result {
	var out, errb bytes.Buffer
	code := run(ctx, args, stdio{in: strings.NewReader(stdin), out: &out, err: &errb})
	return result{code: code, stdout: out.String(), stderr: errb.String(), stdoutBytes: out.Bytes()}
}

// lockedBuffer is a bytes.Buffer for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
