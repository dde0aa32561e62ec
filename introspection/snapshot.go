package introspection

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// reservedPrefix is the root of the introspection scopes; participants
// there (introspection tools' own listeners) are left out of snapshots.
const reservedPrefix = "/__rsb/introspection/"

// Snapshot returns what the DB knows, sorted, without participants under
// /__rsb/introspection/ and without processes (and hosts) that have no other one.
func (db *DB) Snapshot() Snapshot {
	var s Snapshot
	for _, h := range db.hosts {
		host := h.info
		host.LastSeen = h.lastSeen
		host.ClockOffset, host.Latency = medians(&h.offset, &h.latency)
		host.Processes = []Process{}
		for _, p := range h.procs {
			if proc, ok := p.snapshot(); ok {
				host.Processes = append(host.Processes, proc)
			}
		}
		if len(host.Processes) == 0 {
			continue
		}
		host.State = hostState(host.Processes)
		slices.SortFunc(host.Processes, func(a, b Process) int {
			return cmp.Or(cmp.Compare(len(a.ID), len(b.ID)), strings.Compare(a.ID, b.ID))
		})
		s.Hosts = append(s.Hosts, host)
	}
	if s.Hosts == nil {
		s.Hosts = []Host{}
	}
	slices.SortFunc(s.Hosts, func(a, b Host) int {
		return cmp.Or(strings.Compare(a.Hostname, b.Hostname), strings.Compare(a.ID, b.ID))
	})
	return s
}

// snapshot returns the process with its visible participants nested by
// parent, and false when none is visible.
func (p *procEntry) snapshot() (Process, bool) {
	proc := p.info
	proc.Arguments = slices.Clone(proc.Arguments)
	proc.Transports = slices.Clone(proc.Transports)
	proc.ClockOffset, proc.Latency = medians(&p.offset, &p.latency)
	children := make(map[string][]Participant)
	var roots []Participant
	for _, pe := range p.parts {
		if strings.HasPrefix(pe.info.Scope, reservedPrefix) {
			continue
		}
		info := pe.info
		info.Transports = slices.Clone(info.Transports)
		if _, ok := p.parts[pe.parent]; ok && pe.parent != ([16]byte{}) {
			children[info.Parent] = append(children[info.Parent], info)
		} else {
			roots = append(roots, info)
		}
	}
	if len(roots) == 0 {
		return proc, false
	}
	proc.Participants = nest(roots, children, 0)
	return proc, true
}

// nest attaches children to their parents, sorted by scope and id.
func nest(level []Participant, children map[string][]Participant, depth int) []Participant {
	if level == nil {
		return []Participant{}
	}
	slices.SortFunc(level, func(a, b Participant) int {
		return cmp.Or(strings.Compare(a.Scope, b.Scope), strings.Compare(a.Kind, b.Kind), strings.Compare(a.ID, b.ID))
	})
	for i := range level {
		level[i].Children = []Participant{}
		if depth < maxList {
			level[i].Children = nest(children[level[i].ID], children, depth+1)
		}
	}
	return level
}

// hostState is UP while some process answers, DOWN when all crashed.
func hostState(procs []Process) string {
	crashed := 0
	for _, p := range procs {
		switch p.State {
		case StateRunning:
			return StateUp
		case StateCrashed:
			crashed++
		}
	}
	if crashed == len(procs) {
		return StateDown
	}
	return StateUnknown
}

// medians returns the trackers' medians, nil without samples.
func medians(offset, latency *tracker) (*Seconds, *Seconds) {
	var o, l *Seconds
	if v, ok := offset.median(); ok {
		o = secondsOf(v)
	}
	if v, ok := latency.median(); ok {
		l = secondsOf(v)
	}
	return o, l
}

// ChangeKind says what a Change did.
type ChangeKind int

// The kinds of Change (append only).
const (
	HostAdded ChangeKind = iota
	HostRemoved
	ProcessAdded
	ProcessRemoved
	ParticipantAdded
	ParticipantRemoved
	StateChanged
)

var changeNames = [...]string{"host-added", "host-removed", "process-added", "process-removed",
	"participant-added", "participant-removed", "state-changed"}

// String names the kind as the RSB tools' monitor does.
func (k ChangeKind) String() string {
	if int(k) < len(changeNames) {
		return changeNames[k]
	}
	return "unknown"
}

// Change is one thing a DB learnt.
type Change struct {
	Time time.Time
	Kind ChangeKind
	// Process names the process (only HostID for host changes).
	Process ProcessRef
	// Participant is set for participant changes, State for
	// StateChanged.
	Participant Participant
	State       string
}

// String is the change as one line of the monitor style.
func (c Change) String() string {
	var b strings.Builder
	b.WriteString(c.Time.Format("15:04:05.000"))
	b.WriteString(" ")
	b.WriteString(c.Kind.String())
	b.WriteString(" host ")
	b.WriteString(c.Process.HostID)
	if c.Process.PID != "" {
		b.WriteString(" process ")
		b.WriteString(c.Process.PID)
	}
	switch c.Kind {
	case ParticipantAdded, ParticipantRemoved:
		b.WriteString(" " + c.Participant.Kind + " " + c.Participant.ID + " " + c.Participant.Scope)
	case StateChanged:
		b.WriteString(" " + c.State)
	}
	return b.String()
}

// Merge combines snapshots taken through several buses: a host seen in
// several keeps the processes of all (the first snapshot's copy of a
// process wins), sorted as Snapshot sorts.
func Merge(snaps ...Snapshot) Snapshot {
	if len(snaps) == 1 {
		return snaps[0]
	}
	out := Snapshot{Hosts: []Host{}}
	index := make(map[string]int)
	for _, s := range snaps {
		for _, h := range s.Hosts {
			i, ok := index[h.ID]
			if !ok {
				index[h.ID] = len(out.Hosts)
				out.Hosts = append(out.Hosts, h)
				continue
			}
			for _, p := range h.Processes {
				if !slices.ContainsFunc(out.Hosts[i].Processes, func(q Process) bool { return q.ID == p.ID }) {
					out.Hosts[i].Processes = append(out.Hosts[i].Processes, p)
				}
			}
		}
	}
	for i := range out.Hosts {
		slices.SortFunc(out.Hosts[i].Processes, func(a, b Process) int {
			return cmp.Or(cmp.Compare(len(a.ID), len(b.ID)), strings.Compare(a.ID, b.ID))
		})
	}
	slices.SortFunc(out.Hosts, func(a, b Host) int {
		return cmp.Or(strings.Compare(a.Hostname, b.Hostname), strings.Compare(a.ID, b.ID))
	})
	return out
}
