package main

import (
	"bufio"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/config"
)

// unitFile reads dist/rsbd.service: its KEY=VALUE lines (the last of a
// key) and the example RSBD_ARGS its comments give.
func unitFile(t *testing.T) (map[string]string, string) {
	t.Helper()
	f, err := os.Open("../../dist/rsbd.service")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string]string{}
	example := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "#"); ok {
			if v, ok := strings.CutPrefix(strings.TrimSpace(rest), "RSBD_ARGS="); ok {
				example = v
			}
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			keys[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return keys, example
}

// TestUnitFileMatchesFlags runs rsbd's flag and settings parsing on the
// unit's ExecStart with the RSBD_ARGS its comment suggests, and checks its
// exit-status and stop-timeout settings against the daemon's.
func TestUnitFileMatchesFlags(t *testing.T) {
	keys, example := unitFile(t)
	if example == "" {
		t.Fatal("the unit's comments give no RSBD_ARGS example")
	}
	argv := strings.Fields(strings.ReplaceAll(keys["ExecStart"], "$RSBD_ARGS", example))
	if len(argv) < 2 || argv[0] != "/usr/local/bin/rsbd" {
		t.Fatalf("ExecStart %q: want /usr/local/bin/rsbd $RSBD_ARGS", keys["ExecStart"])
	}
	fs, _, err := parseFlags(argv[1:], io.Discard)
	if err != nil {
		t.Fatalf("rsbd %v: %v", argv[1:], err)
	}
	c, err := loadConfig(fs, config.LoadOptions{Files: []string{}, Env: []string{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseSettings(c); err != nil {
		t.Fatalf("rsbd %v: %v", argv[1:], err)
	}
	if keys["RestartPreventExitStatus"] != strconv.Itoa(exitUsage) {
		t.Errorf("RestartPreventExitStatus=%s, rsbd's usage exit code is %d", keys["RestartPreventExitStatus"], exitUsage)
	}
	stop, err := time.ParseDuration(keys["TimeoutStopSec"])
	if err != nil || stop <= shutdownTimeout {
		t.Errorf("TimeoutStopSec=%s does not leave rsbd its %v shutdown (%v)", keys["TimeoutStopSec"], shutdownTimeout, err)
	}
	if keys["ExecReload"] != "/bin/kill -HUP $MAINPID" {
		t.Errorf("ExecReload=%s, rsbd reloads on SIGHUP", keys["ExecReload"])
	}
}

// TestUnitFileRefusesBadFlags makes sure the check above can fail: a flag
// rsbd does not know is refused.
func TestUnitFileRefusesBadFlags(t *testing.T) {
	if _, _, err := parseFlags([]string{"--no-such-flag", "1"}, io.Discard); err == nil {
		t.Fatal("an unknown flag parsed")
	}
}
