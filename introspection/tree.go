package introspection

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteTree prints s as the RSB tools' object tree: each host with its
// state, clock offset and latency, machine and software; below it each
// process with its state, program and arguments, uptime, user, latency,
// RSB version and transports; below that its participants with their id
// prefix, kind and scope. Times since an event are measured to now.
func WriteTree(w io.Writer, s Snapshot, now time.Time) error {
	tw := &treeWriter{w: w, now: now}
	if len(s.Hosts) == 0 {
		tw.line("", "<no entries>")
	}
	for _, h := range s.Hosts {
		tw.host(h)
	}
	return tw.err
}

// treeWriter writes lines with the tree's prefixes and keeps the first
// error.
type treeWriter struct {
	w   io.Writer
	now time.Time
	err error
}

func (tw *treeWriter) line(prefix, text string) {
	if tw.err == nil {
		_, tw.err = io.WriteString(tw.w, strings.TrimRight(prefix+text, " ")+"\n")
	}
}

// branch returns the prefix of a node and of the lines below it, for the
// last child or another one.
func branch(prefix string, last bool) (node, below string) {
	if last {
		return prefix + "└─", prefix + "  "
	}
	return prefix + "├─", prefix + "│ "
}

func (tw *treeWriter) host(h Host) {
	tw.line("", pad(h.Hostname, 17)+pad(" "+h.State, 8)+since(tw.now, h.LastSeen))
	more := "│ "
	if len(h.Processes) == 0 {
		more = "  "
	}
	tw.line(more, pad("Clock offset "+offset(h.ClockOffset), 21)+pad("│ Machine type    "+orUnknown(h.MachineType), 39)+
		"│ Software type    "+orUnknown(h.SoftwareType))
	tw.line(more, pad("Latency      "+offset(h.Latency), 21)+pad("│ Machine version "+truncateLeft(h.MachineVersion, 20), 39)+
		"│ Software version "+orUnknown(h.SoftwareVersion))
	for i, p := range h.Processes {
		node, below := branch("", i == len(h.Processes)-1)
		tw.process(node, below, p)
	}
}

func (tw *treeWriter) process(node, below string, p Process) {
	program := p.ProgramName
	if p.DisplayName != "" {
		program = p.DisplayName + " (" + p.ProgramName + ")"
	}
	if len(p.Arguments) > 0 {
		program += " " + strings.Join(p.Arguments, " ")
	}
	tw.line(node, pad(zeroPad(p.ID, 6), 16)+pad(" "+p.State, 9)+pad(since(tw.now, p.LastSeen), 10)+program)
	more := below + "│ "
	if len(p.Participants) == 0 {
		more = below + "  "
	}
	uptime := "?"
	if !p.StartTime.IsZero() {
		uptime = duration(tw.now.Sub(p.StartTime))
	}
	tw.line(more, pad("Uptime  "+uptime, 21)+"│ User        "+orUnknown(p.User))
	tw.line(more, pad("Latency "+offset(p.Latency), 21)+"│ RSB Version "+orUnknown(p.RSBVersion))
	tw.line(more, "Transports "+strings.Join(p.Transports, ", "))
	tw.participants(below, p.Participants)
}

func (tw *treeWriter) participants(prefix string, ps []Participant) {
	for i, p := range ps {
		node, below := branch(prefix, i == len(ps)-1)
		kind := p.Kind
		if p.Type != "" {
			kind += "<" + p.Type + ">"
		}
		tw.line(node, pad(formatID(p.ID), 18)+pad("ACTIVE", 17)+pad(kind, 23)+p.Scope)
		tw.participants(below, p.Children)
	}
}

// pad left-aligns s in a column of width n (at least one space after it).
func pad(s string, n int) string {
	if w := len([]rune(s)); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s + " "
}

// zeroPad pads a process id with zeros to n digits, as the RSB tools do.
func zeroPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// truncateLeft keeps the last n runes of s behind an ellipsis.
func truncateLeft(s string, n int) string {
	r := []rune(s)
	if s == "" {
		return "?"
	}
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// since is "(DURATION)" since t, or "" for the zero time.
func since(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "(" + duration(now.Sub(t)) + ")"
}

// offset prints a clock offset or latency, "??? s" when unknown.
func offset(s *Seconds) string {
	if s == nil {
		return "??? s"
	}
	return duration(s.Duration())
}

// duration prints d for people: µs, ms, s, min, h.
func duration(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%s%d µs", sign, d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%s%.1f ms", sign, float64(d)/float64(time.Millisecond))
	case d < time.Minute:
		return fmt.Sprintf("%s%.1f s", sign, d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%s%d min", sign, int(d.Minutes()))
	}
	return fmt.Sprintf("%s%d h %d min", sign, int(d.Hours()), int(d.Minutes())%60)
}
