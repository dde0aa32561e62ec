package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(runParticipantsHelper())
	}
	code := m.Run()
	testutil.RemoveBinaries()
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
