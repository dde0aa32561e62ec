package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// style is how the logger shows events: event is called for each event
// under the printer's lock.
type style interface {
	event(w io.Writer, ev *client.Event) error
}

// refresher is a style that also prints on a period (refresh with final
// false) and once when the logger ends (final true).
type refresher interface {
	style
	refresh(w io.Writer, now time.Time, final bool) error
}

// event prints ev with the stateless formatter f (style).
func (f formatter) event(w io.Writer, ev *client.Event) error { return f(w, ev) }

// styleEnv is what a style learns about its output when it is made.
type styleEnv struct {
	tty   bool             // the output is a terminal: refresh in place
	start time.Time        // when the logger started
	now   func() time.Time // the clock of per-event times
}

// newStyles are the logger's --style values and how each is made.
var newStyles = map[string]func(env styleEnv) style{
	"detailed":   func(styleEnv) style { return formatter(formatDetailed) },
	"compact":    func(styleEnv) style { return formatter(formatCompact) },
	"payload":    func(styleEnv) style { return formatter(formatPayload) },
	"json":       func(styleEnv) style { return formatter(formatJSON) },
	"meta-data":  func(styleEnv) style { return formatter(formatMetaData) },
	"discard":    func(styleEnv) style { return formatter(discardEvent) },
	"columns":    func(styleEnv) style { return &columnsStyle{} },
	"timeline":   func(env styleEnv) style { return &timelineStyle{env: env, lanes: map[string]int{}} },
	"monitor":    func(env styleEnv) style { return newMonitor(env) },
	"statistics": func(env styleEnv) style { return newStatistics(env) },
}

// discardEvent prints nothing: the discard style only receives (and counts
// towards --stop-after), for measuring or keeping a subscription.
func discardEvent(io.Writer, *client.Event) error { return nil }

// formatMetaData prints an event's header, timestamps, causes and user
// infos without its payload, then a separator line.
func formatMetaData(w io.Writer, ev *client.Event) error {
	var sb strings.Builder
	row := func(k, v string) { fmt.Fprintf(&sb, "  %-13s %s\n", k, v) }
	fmt.Fprintf(&sb, "Event %s\n", notification.FormatUUID(ev.ID.UUID()))
	row("Scope", ev.Scope.String())
	row("Origin", notification.FormatUUID(ev.ID.SenderID))
	row("Sequence", fmt.Sprint(ev.ID.SequenceNumber))
	row("Method", orNone(ev.Method))
	row("Wire schema", orNone(ev.WireSchema))
	row("Size", fmt.Sprintf("%d bytes", len(ev.Data)))
	for _, c := range ev.Causes {
		row("Cause", c.String())
	}
	md := ev.MetaData
	for _, t := range []struct {
		k  string
		us int64
	}{{"Create", md.CreateTime}, {"Send", md.SendTime}, {"Receive", md.ReceiveTime}, {"Deliver", md.DeliverTime}} {
		row(t.k, formatTime(t.us))
	}
	for _, ut := range md.UserTimes {
		row("Time "+ut.Key, formatTime(int64(ut.Time)))
	}
	for _, ui := range md.UserInfos {
		row("Info "+ui.Key, ui.Value)
	}
	sb.WriteString(strings.Repeat("-", separatorWidth) + "\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

// columnsStyle prints one aligned row per event under a header line.
type columnsStyle struct{ header bool }

// columnsFormat lays out a row of the columns style.
const columnsFormat = "%-15s  %-8s  %8s  %-8s  %-*s  %-*s  %8s  %s\n"

func (c *columnsStyle) event(w io.Writer, ev *client.Event) error {
	if !c.header {
		c.header = true
		if _, err := fmt.Fprintf(w, columnsFormat, "Time", "Origin", "Seq", "Method",
			columnsScopeWidth, "Scope", columnsSchemaWidth, "Wire schema", "Size", "Payload"); err != nil {
			return err
		}
	}
	t := ev.MetaData.ReceiveTime
	if t == 0 {
		t = ev.MetaData.SendTime
	}
	_, err := fmt.Fprintf(w, columnsFormat, clockTime(t), notification.FormatUUID(ev.ID.SenderID)[:8],
		fmt.Sprint(ev.ID.SequenceNumber), clip(orDash(ev.Method), 8),
		columnsScopeWidth, clipLeft(ev.Scope.String(), columnsScopeWidth),
		columnsSchemaWidth, clip(orDash(ev.WireSchema), columnsSchemaWidth),
		fmt.Sprint(len(ev.Data)), summarize(renderPayload(ev), columnsPayloadWidth))
	return err
}

// clockTime prints the time of day of an RSB timestamp in UTC.
func clockTime(us int64) string {
	if us == 0 {
		return "-"
	}
	return client.Time(us).UTC().Format("15:04:05.000000")
}

// clip shortens s to width runes, marking the cut at the end.
func clip(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	return string([]rune(s)[:width-1]) + "…"
}

// clipLeft shortens s to width runes, keeping its end (a scope's leaf).
func clipLeft(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return "…" + string(r[len(r)-width+1:])
}

// timelineStyle prints one line per event: the time since the first
// event, a row of lanes (one per scope, in order of appearance) with the
// event's lane marked, and the scope; a pause longer than timelineGap is
// shown as a line of its own.
type timelineStyle struct {
	env   styleEnv
	first time.Time
	last  time.Time
	lanes map[string]int
}

func (s *timelineStyle) event(w io.Writer, ev *client.Event) error {
	now := s.env.now()
	var sb strings.Builder
	if s.first.IsZero() {
		s.first = now
		fmt.Fprintf(&sb, "%12s  %-*s  %s\n", "Time", timelineLanes, "Lanes", "Scope")
	} else if gap := now.Sub(s.last); gap > timelineGap {
		fmt.Fprintf(&sb, "%12s  %s\n", "", "~ "+gap.Round(time.Millisecond).String()+" pause")
	}
	s.last = now
	lane := s.lane(ev.Scope)
	marks := []byte(strings.Repeat(".", timelineLanes))
	marks[lane] = '*'
	if lane == timelineLanes-1 && len(s.lanes) >= timelineLanes {
		marks[lane] = '+' // the shared lane of the scopes beyond the others
	}
	fmt.Fprintf(&sb, "%12s  %s  %s\n", fmt.Sprintf("+%.6fs", now.Sub(s.first).Seconds()), marks, ev.Scope)
	_, err := io.WriteString(w, sb.String())
	return err
}

// lane returns the lane of sc, giving it the next free one; scopes beyond
// timelineLanes share the last.
func (s *timelineStyle) lane(sc scope.Scope) int {
	k := sc.String()
	if l, ok := s.lanes[k]; ok {
		return l
	}
	if len(s.lanes) >= timelineLanes-1 {
		if len(s.lanes) < maxStyleScopes {
			s.lanes[k] = timelineLanes - 1
		}
		return timelineLanes - 1
	}
	s.lanes[k] = len(s.lanes)
	return s.lanes[k]
}
