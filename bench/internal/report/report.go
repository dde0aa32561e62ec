package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rsbd/rsbd/bench/internal/stats"
)

// Units of a row's values.
const (
	UnitMsgs  = "msgs/s" // events per second; MB/s is derived from Size
	UnitMicro = "µs"     // round-trip time
	UnitBytes = "B"      // memory
)

// Figure is one measured value and whether the run that made it was sound.
type Figure struct {
	// Value in the row's unit; 0 when not measured.
	Value float64 `json:"value"`
	// MBps is the payload bandwidth of a throughput figure (MB = 10^6 B).
	MBps float64 `json:"mbps,omitempty"`
	// Failed says the run does not count: reliable events were lost, or
	// the run broke. Status explains.
	Failed bool   `json:"failed,omitempty"`
	Status string `json:"status,omitempty"`
	// Note carries details: counts, CPU, losses.
	Note string `json:"note,omitempty"`
}

// OK reports whether the figure is a valid measurement.
func (f Figure) OK() bool { return !f.Failed && f.Value > 0 }

// Goal is a bound on a row's ratio: Op is ">=" (rsbd must reach Bound times
// the peer) or "<=" (rsbd must stay within Bound times the peer).
type Goal struct {
	Op    string  `json:"op"`
	Bound float64 `json:"bound"`
}

// Met reports whether ratio satisfies the goal.
func (g Goal) Met(ratio float64) bool {
	if ratio <= 0 {
		return false
	}
	if g.Op == "<=" {
		return ratio <= g.Bound
	}
	return ratio >= g.Bound
}

// String renders the goal as the table shows it, such as "≥ 1.1×".
func (g Goal) String() string {
	op := "≥"
	if g.Op == "<=" {
		op = "≤"
	}
	return fmt.Sprintf("%s %.2g×", op, g.Bound)
}

// Row is one line of the comparison.
type Row struct {
	Section string `json:"section"` // throughput, latency, scaling, memory
	Case    string `json:"case"`    // e.g. "embedded p2p"
	Size    int    `json:"size"`    // payload bytes; 0 if not applicable
	Metric  string `json:"metric"`  // e.g. "msgs/s", "RTT p50"
	Unit    string `json:"unit"`
	RSBD    Figure `json:"rsbd"`
	Peer    string `json:"peer"`
	PeerFig Figure `json:"peer_figure"`
	// Ratio is rsbd / peer; 0 when either figure is missing or failed.
	Ratio float64 `json:"ratio"`
	Goal  *Goal   `json:"goal,omitempty"`
	// GoalMet is the verdict on Goal: false when rsbd's run failed, nil
	// when the peer has no figure to judge against (its run failed or did
	// not run).
	GoalMet *bool `json:"goal_met,omitempty"`
}

// Table is the whole comparison of one run.
type Table struct {
	Title    string    `json:"title"`
	Started  time.Time `json:"started"`
	Duration string    `json:"duration"`
	Command  string    `json:"command"`
	Host     string    `json:"host"`
	Revision string    `json:"revision,omitempty"`
	Pinning  string    `json:"pinning"`
	Notes    []string  `json:"notes,omitempty"`
	Rows     []Row     `json:"rows"`
}

// Add computes the row's ratio and goal verdict and appends it.
func (t *Table) Add(r Row) {
	r.Ratio = 0
	if r.RSBD.OK() && r.PeerFig.OK() {
		r.Ratio = stats.Ratio(r.RSBD.Value, r.PeerFig.Value)
	}
	r.GoalMet = nil
	if r.Goal != nil && (!r.RSBD.OK() || r.PeerFig.OK()) {
		met := r.Goal.Met(r.Ratio)
		r.GoalMet = &met
	}
	t.Rows = append(t.Rows, r)
}

// JSON returns the table as indented JSON.
func (t *Table) JSON() ([]byte, error) { return json.MarshalIndent(t, "", "  ") }

// Markdown returns the table as a Markdown document.
func (t *Table) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", t.Title)
	fmt.Fprintf(&b, "- started: %s, took %s\n", t.Started.UTC().Format(time.RFC3339), t.Duration)
	fmt.Fprintf(&b, "- command: `%s`\n", t.Command)
	fmt.Fprintf(&b, "- host: %s\n", t.Host)
	if t.Revision != "" {
		fmt.Fprintf(&b, "- rsbd revision: %s\n", t.Revision)
	}
	fmt.Fprintf(&b, "- CPU pinning: %s\n", t.Pinning)
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	b.WriteString("\n| section | case | size | metric | rsbd | peer | peer value | rsbd/peer | goal | notes |\n")
	b.WriteString("|---|---|---:|---|---:|---|---:|---:|---|---|\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Section, r.Case, FormatSize(r.Size), r.Metric,
			formatFigure(r.RSBD, r.Unit), r.Peer, formatFigure(r.PeerFig, r.Unit),
			formatRatio(r.Ratio), formatGoal(r), formatNotes(r))
	}
	return b.String()
}

// FormatSize formats a payload size: 64 B, 1 KiB, 64 KiB, 1 MiB.
func FormatSize(n int) string {
	switch {
	case n <= 0:
		return ""
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// FormatCount formats a rate or count with k/M suffixes and 3 significant
// digits: 607 k, 1.03 M, 950.
func FormatCount(v float64) string {
	switch {
	case v >= 1e6:
		return sig3(v/1e6) + " M"
	case v >= 1e4:
		return sig3(v/1e3) + " k"
	}
	return sig3(v)
}

func sig3(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func formatFigure(f Figure, unit string) string {
	if f.Failed {
		s := "FAIL"
		if f.Value > 0 {
			s += " (" + formatValue(f, unit) + ")"
		}
		return s
	}
	if f.Value <= 0 {
		return "–"
	}
	return formatValue(f, unit)
}

func formatValue(f Figure, unit string) string {
	switch unit {
	case UnitMsgs:
		s := FormatCount(f.Value) + " msg/s"
		if f.MBps > 0 {
			s += " · " + formatMBps(f.MBps)
		}
		return s
	case UnitMicro:
		return sig3(f.Value) + " µs"
	case UnitBytes:
		return fmt.Sprintf("%.0f B", f.Value)
	}
	return sig3(f.Value) + " " + unit
}

func formatMBps(v float64) string {
	if v >= 1000 {
		return sig3(v/1000) + " GB/s"
	}
	return sig3(v) + " MB/s"
}

func formatRatio(r float64) string {
	if r <= 0 || math.IsNaN(r) {
		return "–"
	}
	return fmt.Sprintf("%.2f", r)
}

func formatGoal(r Row) string {
	if r.Goal == nil {
		return ""
	}
	verdict := "missed"
	switch {
	case r.GoalMet == nil:
		verdict = "not judged (no peer figure)"
	case *r.GoalMet:
		verdict = "**met**"
	}
	return r.Goal.String() + " " + verdict
}

func formatNotes(r Row) string {
	var parts []string
	for _, f := range []struct {
		who string
		fig Figure
	}{{"rsbd", r.RSBD}, {r.Peer, r.PeerFig}} {
		s := strings.TrimSpace(strings.Join(nonEmpty(f.fig.Status, f.fig.Note), "; "))
		if s != "" {
			parts = append(parts, f.who+": "+s)
		}
	}
	return strings.ReplaceAll(strings.Join(parts, " / "), "|", "\\|")
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
