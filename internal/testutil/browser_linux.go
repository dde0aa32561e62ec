package testutil

import (
	"bytes"
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// browserLifetime bounds a browser a test runs, even when the test's
// cleanup never comes; browserWait bounds the wait for its exit.
const (
	browserLifetime = 2 * time.Minute
	browserWait     = 20 * time.Second
)

// BrowserStartTimeout is how long a test waits for what a page it had
// RunBrowser open does first (a connection, a request): Chromium's cold
// start takes seconds on a loaded host.
const BrowserStartTimeout = 90 * time.Second

// RunBrowser runs headless Chromium (Debian's chromium) on url, with a
// profile of its own, until the end of the test. The browser and its
// helper processes share a process group that the end of the test kills;
// its output is logged when the test failed. Without chromium the test is
// skipped, or fails under CI=true (Program).
func RunBrowser(t testing.TB, url string) {
	t.Helper()
	bin := Program(t, "chromium", "chromium", "chromium-browser")
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), browserLifetime)
	cmd := exec.CommandContext(ctx, bin,
		"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, url)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Wait returns even if a stray helper process holds the output pipe.
	cmd.WaitDelay = browserWait
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	// Registered after TempDir, this runs before the profile is removed.
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("chromium output:\n%s", out.Bytes())
		}
	})
}
