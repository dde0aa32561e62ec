package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rsbd/rsbd/client"
)

// clearScreen moves a terminal's cursor home and clears it, so the monitor
// redraws its table in place.
const clearScreen = "\x1b[H\x1b[2J"

// otherScopes is the monitor's row for the scopes beyond maxStyleScopes.
const otherScopes = "<other scopes>"

// scopeCount is what the monitor counts of one scope.
type scopeCount struct {
	events, bytes         uint64
	lastEvents, lastBytes uint64 // at the previous refresh
	schema                string // wire schema of the latest event
}

// monitorStyle counts events per scope and prints a table of counts and
// rates on each refresh: redrawn in place on a terminal, as blocks
// separated by a blank line otherwise.
type monitorStyle struct {
	env    styleEnv
	scopes map[string]*scopeCount
	last   time.Time // previous refresh
	total  uint64
}

func newMonitor(env styleEnv) *monitorStyle {
	return &monitorStyle{env: env, scopes: map[string]*scopeCount{}, last: env.start}
}

func (m *monitorStyle) event(_ io.Writer, ev *client.Event) error {
	k := ev.Scope.String()
	c := m.scopes[k]
	if c == nil {
		if len(m.scopes) >= maxStyleScopes {
			k = otherScopes
		}
		if c = m.scopes[k]; c == nil {
			c = &scopeCount{}
			m.scopes[k] = c
		}
	}
	c.events++
	c.bytes += uint64(len(ev.Data))
	c.schema = ev.WireSchema
	m.total++
	return nil
}

func (m *monitorStyle) refresh(w io.Writer, now time.Time, final bool) error {
	secs := now.Sub(m.last).Seconds()
	m.last = now
	var sb strings.Builder
	if m.env.tty && !final {
		sb.WriteString(clearScreen)
	}
	fmt.Fprintf(&sb, "%s  %d scopes, %d events\n", now.UTC().Format(time.RFC3339), len(m.scopes), m.total)
	fmt.Fprintf(&sb, "%-*s  %10s  %10s  %12s  %12s  %s\n", monitorScopeWidth, "Scope", "Events", "Rate/s", "Bytes", "Bytes/s", "Wire schema")
	keys := make([]string, 0, len(m.scopes))
	for k := range m.scopes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		c := m.scopes[k]
		fmt.Fprintf(&sb, "%-*s  %10d  %10.1f  %12d  %12.1f  %s\n", monitorScopeWidth, clipLeft(k, monitorScopeWidth),
			c.events, rate(c.events-c.lastEvents, secs), c.bytes, rate(c.bytes-c.lastBytes, secs), orDash(c.schema))
		c.lastEvents, c.lastBytes = c.events, c.bytes
	}
	if !m.env.tty || final {
		sb.WriteString("\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// rate is n per second over secs (0 for an empty period).
func rate(n uint64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

// statisticsStyle prints one line per refresh period: events, rate,
// throughput, mean size and mean latency (receive minus send time) of the
// period; at the end a line of the totals.
type statisticsStyle struct {
	env     styleEnv
	header  bool
	last    time.Time
	period  periodStats
	overall periodStats
}

// periodStats sums the events of a period.
type periodStats struct {
	events, bytes uint64
	latency       time.Duration // sum over the events with both times
	timed         uint64        // events with send and receive times
}

func newStatistics(env styleEnv) *statisticsStyle {
	return &statisticsStyle{env: env, last: env.start}
}

func (s *statisticsStyle) event(_ io.Writer, ev *client.Event) error {
	for _, p := range []*periodStats{&s.period, &s.overall} {
		p.events++
		p.bytes += uint64(len(ev.Data))
		if md := ev.MetaData; md.SendTime != 0 && md.ReceiveTime != 0 {
			p.latency += time.Duration(md.ReceiveTime-md.SendTime) * time.Microsecond
			p.timed++
		}
	}
	return nil
}

// statisticsFormat lays out a line of the statistics style.
const statisticsFormat = "%-15s  %10s  %10s  %12s  %10s  %12s\n"

func (s *statisticsStyle) refresh(w io.Writer, now time.Time, final bool) error {
	var sb strings.Builder
	if !s.header {
		s.header = true
		fmt.Fprintf(&sb, statisticsFormat, "Time", "Events", "Rate/s", "Bytes/s", "Size", "Latency")
	}
	s.line(&sb, now.UTC().Format("15:04:05.000000"), s.period, now.Sub(s.last).Seconds())
	s.last, s.period = now, periodStats{}
	if final {
		s.line(&sb, "total", s.overall, now.Sub(s.env.start).Seconds())
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// line prints the sums p of a period of secs seconds.
func (s *statisticsStyle) line(sb *strings.Builder, label string, p periodStats, secs float64) {
	size, lat := "-", "-"
	if p.events > 0 {
		size = fmt.Sprintf("%.1f", float64(p.bytes)/float64(p.events))
	}
	if p.timed > 0 {
		lat = (p.latency / time.Duration(p.timed)).Round(time.Microsecond).String()
	}
	fmt.Fprintf(sb, statisticsFormat, label, fmt.Sprint(p.events), fmt.Sprintf("%.1f", rate(p.events, secs)),
		fmt.Sprintf("%.1f", rate(p.bytes, secs)), size, lat)
}
