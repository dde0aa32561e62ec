package ddsperf

import (
	"errors"
	"strings"
	"testing"
)

// Output as printed by ddsperf 0.10.2 on this machine.
const subOutput = `[25224] participant vm:25224: new (self)
[25224] participant vm:25234: new
[25224] 1.002  size 1024 total 799230 lost 0 delta 799230 lost 0 rate 797.76 kS/s 6535.29 Mb/s (79.78 kS/s 653.53 Mb/s)
[25224] 1.002  rss:7.3MB vcsw:22674 ivcsw:2325 tev:0%+3% recvUC:51%+9%
[25224] 2.000  size 1024 total 1602649 lost 0 delta 803419 lost 0 rate 804.80 kS/s 6592.93 Mb/s (160.54 kS/s 1315.15 Mb/s)
[25224] 3.000  size 1024 total 2494741 lost 0 delta 892092 lost 0 rate 892.13 kS/s 7308.32 Mb/s (249.48 kS/s 2043.78 Mb/s)
[25224] 4.000  size 1024 total 3294741 lost 0 delta 800000 lost 0 rate 1.20 MS/s 7308.32 Mb/s (249.48 kS/s 2043.78 Mb/s)
[25224] participant vm:25234: gone
[25224] 5.000  size 1024 total 3294742 lost 0 delta 1 lost 0 rate 0.00 kS/s 0.01 Mb/s (249.47 kS/s 2043.62 Mb/s)
`

const pingOutput = `[25504] participant vm:25504: new (self)
[25504] 1.000  vm:25493 size 64 mean 40.000us min 6.945us 50% 99.000us 90% 28.467us 99% 500.000us max 2644.326us cnt 100
[25504] 2.000  vm:25493 size 64 mean 23.130us min 6.945us 50% 24.747us 90% 28.467us 99% 40.289us max 2644.326us cnt 21551
[25504] 2.000  rss:7.7MB vcsw:19677 ivcsw:1890 recvUC:6%+34%
[25504] 3.000  vm:25493 size 64 mean 26.067us min 10.806us 50% 25.197us 90% 28.878us 99% 40.209us max 1554.962us cnt 19141
[25504] 4.000  vm:25493 size 64 mean 26.067us min 10.806us 50% 26.000us 90% 28.878us 99% 41.000us max 1554.962us cnt 20000
`

func TestParseSub(t *testing.T) {
	got, err := ParseSub(strings.NewReader(subOutput))
	if err != nil {
		t.Fatal(err)
	}
	// Windows with data: 797.76k, 804.80k, 892.13k, 1.20M, 0.00k(delta 1);
	// first and last dropped leaves 804.80k, 892.13k, 1.20M.
	if got.Windows != 3 || got.Rate != 892130 || got.Total != 3294742 || got.Lost != 0 {
		t.Fatalf("ParseSub = %+v", got)
	}
}

func TestParseSubLoss(t *testing.T) {
	out := strings.ReplaceAll(subOutput, "total 3294742 lost 0", "total 3294742 lost 17")
	got, err := ParseSub(strings.NewReader(out))
	if err != nil || got.Lost != 17 {
		t.Fatalf("ParseSub = %+v, %v; want lost 17", got, err)
	}
}

func TestParsePing(t *testing.T) {
	got, err := ParsePing(strings.NewReader(pingOutput))
	if err != nil {
		t.Fatal(err)
	}
	// First window dropped; medians of 24.747, 25.197, 26.0 and 40.289, 40.209, 41.0.
	if got.Windows != 3 || got.P50 != 25.197 || got.P99 != 40.289 || got.Count != 60692 {
		t.Fatalf("ParsePing = %+v", got)
	}
}

func TestParseEmpty(t *testing.T) {
	if _, err := ParseSub(strings.NewReader("error: too few matching participants (0)\n")); err == nil {
		t.Fatal("ParseSub accepted output without rate lines")
	}
	if _, err := ParsePing(strings.NewReader("")); err == nil {
		t.Fatal("ParsePing accepted empty output")
	}
}

// A 6-s run of ddsperf 0.10.2 on this machine whose publisher stalled after
// its first thousand samples (its writes then timed out).
const (
	stalledPub = `[12009] 1.000 10.1k/s   0n |@_____.   ................  ..|   0%   1m
[12009] 2.000     0/s  inf |                              |   0%   0n
[12009] 6.000     0/s  inf |                              |   0%   0n
write error: -10
`
	stalledSub = `[12008] participant vm:12009: gone
[12008] 11.000  size 64 total 1000 lost 0 delta 1000 lost 0 rate 1.00 kS/s 0.51 Mb/s (0.10 kS/s 0.05 Mb/s)
`
)

// TestCheckThroughput: a run whose publisher reports a write error, or
// whose subscriber saw data in too few windows, is rejected as stalled; a
// full run passes.
func TestCheckThroughput(t *testing.T) {
	full, err := ParseSub(strings.NewReader(subOutput))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckThroughput(full, []byte("[1] 1.000 800k/s\n"), 6); err != nil {
		t.Fatalf("full run rejected: %v", err)
	}
	stalled, err := ParseSub(strings.NewReader(stalledSub))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckThroughput(stalled, []byte(stalledPub), 6); !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "write error: -10") {
		t.Fatalf("stalled run: %v", err)
	}
	if err := CheckThroughput(stalled, nil, 6); !errors.Is(err, ErrStalled) {
		t.Fatalf("one window of a 6-s run: %v", err)
	}
	if err := CheckThroughput(Throughput{Windows: 1}, nil, 3); err != nil {
		t.Fatalf("one window of a 3-s run (--quick) rejected: %v", err)
	}
}
