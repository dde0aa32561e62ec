package ddsperf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rsbd/rsbd/bench/internal/stats"
)

// Binary is the tool's name on PATH.
const Binary = "ddsperf"

// URI is the Cyclone DDS configuration: loopback with multicast, all else
// default (reliable, KEEP_ALL data, default fragment and message sizes).
const URI = `<CycloneDDS><Domain><General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General></Domain></CycloneDDS>`

// ErrMissing is returned when ddsperf is not installed.
var ErrMissing = errors.New("ddsperf not found (apt-get install cyclonedds-tools)")

// Available reports whether ddsperf is on PATH.
func Available() error {
	if _, err := exec.LookPath(Binary); err != nil {
		return ErrMissing
	}
	return nil
}

// Throughput is the subscriber's view of a throughput run.
type Throughput struct {
	Windows int     `json:"windows"` // 1-s windows used (first and last dropped)
	Rate    float64 `json:"rate"`    // median samples/s of the windows used
	Total   int64   `json:"total"`   // samples received
	Lost    int64   `json:"lost"`    // samples ddsperf counted lost
}

// Latency is the pinger's view of a round-trip run, in microseconds.
type Latency struct {
	Windows int     `json:"windows"`
	P50     float64 `json:"p50_us"` // median of the per-window medians
	P99     float64 `json:"p99_us"` // median of the per-window 99th percentiles
	Count   int64   `json:"count"`  // round trips in the windows used
}

var (
	subLine  = regexp.MustCompile(`size (\d+) total (\d+) lost (\d+) delta (\d+) lost (\d+) rate ([0-9.]+) ([kMG]?)S/s`)
	pingLine = regexp.MustCompile(`size (\d+) mean [0-9.]+us min [0-9.]+us 50% ([0-9.]+)us 90% [0-9.]+us 99% ([0-9.]+)us max [0-9.]+us cnt (\d+)`)
)

// ParseSub reads the subscriber's per-second lines: the median rate of the
// windows with data, first and last dropped (ramp-up and the partial last
// second), the total received and the samples ddsperf counted lost.
func ParseSub(r io.Reader) (Throughput, error) {
	var rates []float64
	var res Throughput
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := subLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		total, _ := strconv.ParseInt(m[2], 10, 64)
		lost, _ := strconv.ParseInt(m[3], 10, 64)
		delta, _ := strconv.ParseInt(m[4], 10, 64)
		rate, err := strconv.ParseFloat(m[6], 64)
		if err != nil {
			continue
		}
		rate *= map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m[7]]
		res.Total, res.Lost = total, lost
		if delta > 0 {
			rates = append(rates, rate)
		}
	}
	if len(rates) > 2 {
		rates = rates[1 : len(rates)-1]
	}
	if len(rates) == 0 {
		return res, errors.New("ddsperf sub: no rate lines")
	}
	res.Windows, res.Rate = len(rates), stats.Median(rates)
	return res, sc.Err()
}

// ParsePing reads the pinger's per-second lines and returns the medians of
// the per-window p50 and p99, the first window dropped.
func ParsePing(r io.Reader) (Latency, error) {
	var p50s, p99s []float64
	var counts []int64
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := pingLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		p50, err1 := strconv.ParseFloat(m[2], 64)
		p99, err2 := strconv.ParseFloat(m[3], 64)
		cnt, err3 := strconv.ParseInt(m[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		p50s, p99s, counts = append(p50s, p50), append(p99s, p99), append(counts, cnt)
	}
	if len(p50s) > 1 {
		p50s, p99s, counts = p50s[1:], p99s[1:], counts[1:]
	}
	if len(p50s) == 0 {
		return Latency{}, errors.New("ddsperf ping: no latency lines")
	}
	res := Latency{Windows: len(p50s), P50: stats.Median(p50s), P99: stats.Median(p99s)}
	for _, c := range counts {
		res.Count += c
	}
	return res, sc.Err()
}

// Runner starts ddsperf processes in a private DDS domain.
type Runner struct {
	// Domain is the DDS domain id; 0 picks a random one in 100..229.
	Domain int
	// PinPub and PinSub, when set, are taskset CPU lists for the
	// publishing (pub, ping) and the receiving (sub, pong) process.
	PinPub, PinSub string
	// Log receives the raw output of every process.
	Log io.Writer
	// lastPub is the output of the last publishing (pub or ping) process.
	lastPub []byte
}

func (r *Runner) domain() int {
	if r.Domain == 0 {
		r.Domain = 100 + rand.IntN(130)
	}
	return r.Domain
}

func (r *Runner) command(ctx context.Context, pin string, args ...string) *exec.Cmd {
	argv := append([]string{Binary, "-i", strconv.Itoa(r.domain())}, args...)
	if pin != "" {
		argv = append([]string{"taskset", "-c", pin}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "CYCLONEDDS_URI="+URI)
	return cmd
}

// Throughput runs a subscriber and, once it is up, a publisher of size-byte
// samples for dur seconds (as fast as possible, burst 1), and parses the
// subscriber's report.
func (r *Runner) Throughput(ctx context.Context, size int, dur time.Duration) (Throughput, error) {
	secs := int(dur.Seconds())
	var subOut bytes.Buffer
	sub := r.command(ctx, r.PinSub, "-D", strconv.Itoa(secs+30), "-Qminmatch:1", "-Qinitwait:10", "sub")
	sub.Stdout, sub.Stderr = &subOut, &subOut
	pub := r.command(ctx, r.PinPub, "-D", strconv.Itoa(secs), "-Qminmatch:1", "-Qinitwait:10", "pub", "size", strconv.Itoa(size))
	if err := r.pair(sub, pub, &subOut); err != nil {
		return Throughput{}, err
	}
	res, err := ParseSub(&subOut)
	if err != nil {
		return res, err
	}
	return res, CheckThroughput(res, r.lastPub, secs)
}

// ErrStalled reports a throughput run whose data stopped flowing: the
// publisher's writes timed out (its reliable history full, the subscriber
// not acknowledging) or the subscriber saw data in too few of the run's
// windows. Its rate would stand for a run that did not happen.
var ErrStalled = errors.New("ddsperf: throughput run stalled")

// CheckThroughput rejects a run of secs seconds that stalled: a "write
// error" from the publisher, or fewer windows with data than half of the
// full windows the run should give (secs - 2: the first and last are
// dropped), at least one.
func CheckThroughput(res Throughput, pubOut []byte, secs int) error {
	for _, l := range strings.Split(string(pubOut), "\n") {
		if strings.Contains(l, "write error") {
			return fmt.Errorf("%w: publisher: %s", ErrStalled, strings.TrimSpace(l))
		}
	}
	if want := max((secs-2+1)/2, 1); res.Windows < want {
		return fmt.Errorf("%w: data in %d windows, want %d or more", ErrStalled, res.Windows, want)
	}
	return nil
}

// Latency runs a pong and a ping process (one ping outstanding) of
// size-byte samples for dur seconds and parses the pinger's report.
func (r *Runner) Latency(ctx context.Context, size int, dur time.Duration) (Latency, error) {
	secs := int(dur.Seconds())
	var pongOut bytes.Buffer
	pong := r.command(ctx, r.PinSub, "-D", strconv.Itoa(secs+30), "pong")
	pong.Stdout, pong.Stderr = &pongOut, &pongOut
	ping := r.command(ctx, r.PinPub, "-D", strconv.Itoa(secs), "-Qminmatch:1", "-Qinitwait:10", "ping", "size", strconv.Itoa(size))
	if err := r.pair(pong, ping, &pongOut); err != nil {
		return Latency{}, err
	}
	return ParsePing(bytes.NewReader(r.lastPub))
}

// settle is how long the receiving process keeps running after the
// publishing one ended, so it reports its last full window.
const settle = 1200 * time.Millisecond

// pair starts the receiving process, runs the publishing one to its end,
// lets the receiver report for a moment and stops it with SIGINT (it then
// exits cleanly; it is killed if it does not within 5 s).
func (r *Runner) pair(recv, pub *exec.Cmd, recvOut *bytes.Buffer) error {
	var pubOut bytes.Buffer
	pub.Stdout, pub.Stderr = &pubOut, &pubOut
	if err := recv.Start(); err != nil {
		return err
	}
	perr := pub.Run()
	time.Sleep(settle)
	_ = recv.Process.Signal(os.Interrupt)
	exited := make(chan error, 1)
	go func() { exited <- recv.Wait() }()
	var rerr error
	select {
	case rerr = <-exited:
	case <-time.After(5 * time.Second):
		_ = recv.Process.Kill()
		rerr = <-exited
	}
	r.lastPub = pubOut.Bytes()
	r.log("pub", &pubOut)
	r.log("sub", recvOut)
	if perr != nil {
		return fmt.Errorf("ddsperf pub: %w", perr)
	}
	if rerr != nil {
		return fmt.Errorf("ddsperf sub: %w", rerr)
	}
	return nil
}

func (r *Runner) log(who string, b *bytes.Buffer) {
	if r.Log == nil {
		return
	}
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		fmt.Fprintf(r.Log, "ddsperf %s: %s\n", who, l)
	}
}
