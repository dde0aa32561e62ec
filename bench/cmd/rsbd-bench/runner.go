package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rsbd/rsbd/bench/internal/agent"
	"github.com/rsbd/rsbd/bench/internal/bus"
	"github.com/rsbd/rsbd/bench/internal/report"
)

// Roles decide CPU pinning under --pin.
const (
	rolePub    = "pub"    // publishers and pingers: CPU 0
	roleSub    = "sub"    // subscribers and pongers: CPU 1
	roleServer = "server" // daemons and brokers: not pinned
)

// runner drives one comparison run: it spawns agents, keeps the figures
// and builds the table.
type runner struct {
	o       options
	p       plan
	exe     string
	logFile *os.File
	logPath string
	agentW  *prefixWriter
	start   time.Time
	figs    map[string]report.Figure
	notes   []string
	only    map[string]bool
	// pollErr is why the polled round trips cannot run, once known.
	pollErr error
	// busyErr is why the busy-host round trips cannot run, once known.
	busyErr error
	// latOnly is set while a stage runs only for the busy stage's sake
	// (--only busy without the stage's own name): its round trips run,
	// quiet and busy, and nothing else.
	latOnly bool
}

func newRunner(o options) (*runner, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r := &runner{o: o, p: fullPlan(), exe: exe, start: time.Now(), figs: map[string]report.Figure{}}
	if o.quick {
		r.p = quickPlan()
	}
	r.logPath = o.logPath
	if r.logPath == "" {
		r.logPath = filepath.Join(os.TempDir(), fmt.Sprintf("rsbd-bench-%d.log", os.Getpid()))
	}
	if r.logFile, err = os.Create(r.logPath); err != nil {
		return nil, err
	}
	r.agentW = &prefixWriter{w: r.logFile}
	if o.only != "" {
		r.only = map[string]bool{}
		for _, s := range strings.Split(o.only, ",") {
			r.only[strings.TrimSpace(s)] = true
		}
	}
	for _, dir := range []string{o.profileDir, o.traceDir} {
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *runner) close() { r.logFile.Close() }

// wants says whether stage runs: every stage in a full run, the listed
// ones with --only, and with busy listed every stage that has round trips.
func (r *runner) wants(stage string) bool {
	return r.only == nil || r.only[stage] || (r.busyAlone() && stage != "scaling")
}

// busyAlone says whether --only names the busy stage and no other.
func (r *runner) busyAlone() bool { return len(r.only) == 1 && r.only[busyStage] }

// latencyOnly says whether stage runs only for its round trips: with
// --latency-only, or when busy asked for it and its own name did not.
func (r *runner) latencyOnly(stage string) bool {
	return r.o.latencyOnly || (r.only != nil && !r.only[stage])
}

// logf prints a progress line to stderr and the log.
func (r *runner) logf(format string, a ...any) {
	line := fmt.Sprintf("[%6.1fs] ", time.Since(r.start).Seconds()) + fmt.Sprintf(format, a...)
	fmt.Fprintln(os.Stderr, line)
	r.agentW.writeLine("runner", line)
}

// pinFor returns the taskset CPU list of a role ("" = not pinned).
func (r *runner) pinFor(role string) string {
	if !r.o.pin {
		return ""
	}
	switch role {
	case rolePub:
		return "0"
	case roleSub:
		return "1"
	}
	return ""
}

func (r *runner) pinning() string {
	if !r.o.pin {
		return "none (every process floats over both cores, as in the anchor measurements)"
	}
	return "taskset -c 0 for publishers and pingers, taskset -c 1 for subscribers and pongers " +
		"(rsbd, NATS and ddsperf alike); daemons and the NATS server not pinned"
}

// spawn starts an agent process.
func (r *runner) spawn(name, role string) (*agent.Process, error) {
	w := r.agentW.named(name)
	return agent.Spawn(name, []string{r.exe, "-agent"}, r.pinFor(role), w)
}

// closeAll closes agents, logging what went wrong.
func (r *runner) closeAll(ps ...*agent.Process) {
	var wg sync.WaitGroup
	for _, p := range ps {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Close(10 * time.Second); err != nil {
				r.logf("closing agent: %v", err)
			}
		}()
	}
	wg.Wait()
}

// set records a figure under key.
func (r *runner) set(key string, f report.Figure) { r.figs[key] = f }

// fail records the same failure under several keys.
func (r *runner) fail(err error, keys ...string) {
	for _, k := range keys {
		if _, done := r.figs[k]; !done {
			r.figs[k] = report.Figure{Failed: true, Status: "error: " + err.Error()}
		}
	}
}

// nodeConfig is the configuration of a new rsbd node of the run: a
// multicast pool of its own and the run's --spin-wait.
func (r *runner) nodeConfig() bus.NodeConfig {
	return bus.NodeConfig{
		SpinWait: r.o.spinWait,
		PoolBase: fmt.Sprintf("239.255.%d.0", 20+rand.IntN(200)),
		PoolPort: uint16(20000 + rand.IntN(12000)),
	}
}

// prefixWriter writes each agent's stderr lines to the log with its name.
type prefixWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *prefixWriter) writeLine(name, line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s %s: %s\n", time.Now().Format("15:04:05.000"), name, line)
}

func (p *prefixWriter) named(name string) io.Writer {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.writeLine(name, sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	return pw
}

// cpuSample is the machine-wide CPU time from /proc/stat.
type cpuSample struct{ busy, total uint64 }

func readCPU() cpuSample {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuSample{}
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return cpuSample{}
	}
	var s cpuSample
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		s.total += n
		if i != 3 && i != 4 { // idle, iowait
			s.busy += n
		}
	}
	return s
}

// busyPercent is the host CPU use between two samples, 100% per core.
func busyPercent(a, b cpuSample) float64 {
	if b.total <= a.total {
		return 0
	}
	return float64(b.busy-a.busy) / float64(b.total-a.total) * 100 * float64(runtime.NumCPU())
}

// hostInfo describes the machine.
func hostInfo() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				if _, v, ok := strings.Cut(l, ":"); ok {
					model = strings.TrimSpace(v)
				}
				break
			}
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return fmt.Sprintf("%d CPUs (%s), Linux %s, %s", runtime.NumCPU(), model, strings.TrimSpace(string(kernel)), runtime.Version())
}

// loadAverage returns the 1, 5 and 15 minute load averages: other work on
// the machine during the run shows here.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
