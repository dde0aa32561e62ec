package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// cpuOf reads the user and system CPU time of process pid from /proc.
func cpuOf(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100
}

// TestLoadBurnsAndStops: the load processes run (they use CPU time) and
// are gone after stop. The test binary runs itself as a load process.
func TestLoadBurnsAndStops(t *testing.T) {
	if os.Getenv("RSBD_BENCH_BURN") == "1" {
		runBurn()
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	l := &load{}
	for range 2 {
		c := exec.Command(exe, "-test.run=^TestLoadBurnsAndStops$")
		c.Env = append(os.Environ(), "RSBD_BENCH_BURN=1")
		c.SysProcAttr = dieWithParent()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		l.cmds = append(l.cmds, c)
	}
	cmds := l.cmds
	deadline := time.Now().Add(30 * time.Second)
	for cpu := time.Duration(0); cpu < 20*time.Millisecond; cpu = cpuOf(t, cmds[0].Process.Pid) {
		if time.Now().After(deadline) {
			l.stop()
			t.Fatalf("a load process used %v of CPU in 30 s", cpu)
		}
		<-time.After(10 * time.Millisecond) // the load's own pace: poll its CPU time
	}
	l.stop()
	for _, c := range cmds {
		if c.ProcessState == nil || c.ProcessState.Success() {
			t.Fatalf("load process %d not killed: %v", c.Process.Pid, c.ProcessState)
		}
	}
}
