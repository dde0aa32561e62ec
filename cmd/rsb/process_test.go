package main

import (
	"context"
	"errors"
	"os/exec"
	"strings"

	"github.com/rsbd/rsbd/internal/syncbuf"
)

// processInvoker runs the rsb binary at bin.
func processInvoker(bin string) invoker {
	return func(ctx context.Context, stdin string, args ...string) result {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb syncbuf.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			code = -1
			errb.Write([]byte(err.Error()))
		}
		return result{code: code, stdout: out.String(), stderr: errb.String(), stdoutBytes: []byte(out.String())}
	}
}
