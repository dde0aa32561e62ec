package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStoppedTogetherLeaveQuietly stops both daemons of a cluster at once:
// each leaves with no peer left to tell, which is normal, so neither logs a
// warning or an error about it and both exit 0.
func TestStoppedTogetherLeaveQuietly(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("A", opts{})
	b := c.start("B", opts{})
	c.waitPeers(30 * time.Second)
	a.Signal(syscall.SIGTERM)
	b.Signal(syscall.SIGTERM)
	for _, d := range []*daemon{a, b} {
		code, ok := d.Wait(30 * time.Second)
		if !ok || code != 0 {
			t.Fatalf("%s: exit code %d (exited %v)\n%s", d.Name(), code, ok, d.Logs())
		}
		for line := range strings.Lines(d.Logs()) {
			if (strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`)) &&
				(strings.Contains(line, "leave") || strings.Contains(line, "shutdown")) {
				t.Errorf("%s logged: %s", d.Name(), line)
			}
		}
	}
}
