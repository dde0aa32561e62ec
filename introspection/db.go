package introspection

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
	"github.com/rsbd/rsbd/scope"
)

// Errors of the DB's decoders.
var (
	// ErrMalformed is wrapped by the error of a Hello or Bye that cannot
	// be decoded or lacks a required field.
	ErrMalformed = errors.New("introspection: malformed message")
	// ErrLimit is wrapped by the error of a Hello dropped because the DB
	// holds as many hosts, processes or participants as it may.
	ErrLimit = errors.New("introspection: limit reached")
)

// ProcessRef names a process: its host's id and its process id.
type ProcessRef struct {
	HostID, PID string
}

// Stats counts what a DB was fed.
type Stats struct {
	Hellos, Byes uint64
	// Malformed counts Hellos and Byes that could not be used;
	// OverLimit Hellos dropped for the bounds.
	Malformed, OverLimit uint64
}

// DB is what introspection knows about a bus: hosts, their processes and
// their participants, fed with decoded Hellos, Byes and echo results. It
// is a pure state machine (the caller passes the time and serialises
// calls), bounded by maxHosts, maxProcesses and maxParticipants.
type DB struct {
	hosts map[string]*hostEntry
	byID  map[[16]byte]ProcessRef
	procs int
	stats Stats
}

type hostEntry struct {
	info            Host
	procs           map[string]*procEntry
	offset, latency tracker
	lastSeen        time.Time
}

type procEntry struct {
	info            Process
	parts           map[[16]byte]*partEntry
	offset, latency tracker
}

type partEntry struct {
	info   Participant
	parent [16]byte
}

// NewDB returns an empty DB.
func NewDB() *DB {
	return &DB{hosts: make(map[string]*hostEntry), byID: make(map[[16]byte]ProcessRef)}
}

// Stats returns the DB's counters.
func (db *DB) Stats() Stats { return db.stats }

// Hello records the participant a serialized Hello announces (again).
func (db *DB) Hello(data []byte, now time.Time) ([]Change, error) {
	db.stats.Hellos++
	var h introspection.Hello
	if err := proto.Unmarshal(data, &h); err != nil {
		db.stats.Malformed++
		return nil, fmt.Errorf("%w: hello: %w", ErrMalformed, err)
	}
	pe, ref, err := participantOf(&h)
	if err != nil {
		db.stats.Malformed++
		return nil, err
	}
	var id [16]byte
	copy(id[:], h.GetId())
	var out []Change
	if old, ok := db.byID[id]; ok && old != ref {
		out = append(out, db.remove(id, now)...)
	}
	host, changes, err := db.ensureHost(&h, ref, now)
	if err != nil {
		return out, err
	}
	out = append(out, changes...)
	proc, changes, err := db.ensureProcess(host, &h, ref, now)
	if err != nil {
		return out, err
	}
	out = append(out, changes...)
	if _, known := proc.parts[id]; !known {
		if len(db.byID) >= maxParticipants {
			db.stats.OverLimit++
			return out, fmt.Errorf("%w: %d participants", ErrLimit, maxParticipants)
		}
		out = append(out, Change{Time: now, Kind: ParticipantAdded, Process: ref, Participant: pe.info})
	}
	proc.parts[id] = pe
	db.byID[id] = ref
	host.lastSeen, proc.info.LastSeen = now, now
	return out, nil
}

// participantOf checks a Hello and extracts its participant and process.
func participantOf(h *introspection.Hello) (*partEntry, ProcessRef, error) {
	ref := ProcessRef{HostID: cut(h.GetHost().GetId()), PID: cut(h.GetProcess().GetId())}
	switch {
	case len(h.GetId()) != 16:
		return nil, ref, fmt.Errorf("%w: hello: participant id of %d bytes", ErrMalformed, len(h.GetId()))
	case h.GetKind() == "" || ref.HostID == "" || ref.PID == "":
		return nil, ref, fmt.Errorf("%w: hello: no kind, host id or process id", ErrMalformed)
	}
	sc, err := scope.Parse(h.GetScope())
	if err != nil {
		return nil, ref, fmt.Errorf("%w: hello: %w", ErrMalformed, err)
	}
	var id, parent [16]byte
	copy(id[:], h.GetId())
	pe := &partEntry{info: Participant{Kind: cut(h.GetKind()), ID: notification.FormatUUID(id), Scope: sc.String(),
		Type: cut(h.GetType()), Transports: cutList(h.GetTransport())}}
	if len(h.GetParent()) == 16 {
		copy(parent[:], h.GetParent())
		pe.parent, pe.info.Parent = parent, notification.FormatUUID(parent)
	}
	return pe, ref, nil
}

// ensureHost finds or adds the host of a Hello and refreshes its facts.
func (db *DB) ensureHost(h *introspection.Hello, ref ProcessRef, now time.Time) (*hostEntry, []Change, error) {
	host, ok := db.hosts[ref.HostID]
	var out []Change
	if !ok {
		if len(db.hosts) >= maxHosts {
			db.stats.OverLimit++
			return nil, nil, fmt.Errorf("%w: %d hosts", ErrLimit, maxHosts)
		}
		host = &hostEntry{procs: make(map[string]*procEntry)}
		db.hosts[ref.HostID] = host
		out = append(out, Change{Time: now, Kind: HostAdded, Process: ProcessRef{HostID: ref.HostID}})
	}
	hi := h.GetHost()
	host.info = Host{ID: ref.HostID, Hostname: cut(hi.GetHostname()), MachineType: cut(hi.GetMachineType()),
		MachineVersion: cut(hi.GetMachineVersion()), SoftwareType: cut(hi.GetSoftwareType()),
		SoftwareVersion: cut(hi.GetSoftwareVersion())}
	if host.info.Hostname == "" {
		host.info.Hostname = ref.HostID
	}
	return host, out, nil
}

// ensureProcess finds or adds the process of a Hello and refreshes its
// facts.
func (db *DB) ensureProcess(host *hostEntry, h *introspection.Hello, ref ProcessRef, now time.Time) (*procEntry, []Change, error) {
	proc, ok := host.procs[ref.PID]
	var out []Change
	if !ok {
		if db.procs >= maxProcesses {
			db.stats.OverLimit++
			return nil, nil, fmt.Errorf("%w: %d processes", ErrLimit, maxProcesses)
		}
		proc = &procEntry{parts: make(map[[16]byte]*partEntry), info: Process{State: StateUnknown}}
		host.procs[ref.PID] = proc
		db.procs++
		out = append(out, Change{Time: now, Kind: ProcessAdded, Process: ref})
	}
	pi := h.GetProcess()
	info := &proc.info
	info.ID, info.ProgramName, info.Arguments = ref.PID, cut(pi.GetProgramName()), cutList(pi.GetCommandlineArguments())
	info.DisplayName, info.User, info.RSBVersion = cut(pi.GetDisplayName()), cut(pi.GetExecutingUser()), cut(pi.GetRsbVersion())
	info.StartTime = time.UnixMicro(int64(min(pi.GetStartTime(), 1<<62))).UTC()
	for _, t := range cutList(h.GetTransport()) {
		if len(info.Transports) < maxList && !contains(info.Transports, t) {
			info.Transports = append(info.Transports, t)
		}
	}
	return proc, out, nil
}

// Bye forgets the participant a serialized Bye names.
func (db *DB) Bye(data []byte, now time.Time) ([]Change, error) {
	db.stats.Byes++
	var b introspection.Bye
	if err := proto.Unmarshal(data, &b); err != nil || len(b.GetId()) != 16 {
		db.stats.Malformed++
		return nil, fmt.Errorf("%w: bye", ErrMalformed)
	}
	var id [16]byte
	copy(id[:], b.GetId())
	return db.remove(id, now), nil
}

// remove forgets participant id, its process when it was the last
// participant there, and the host when that was its last process.
func (db *DB) remove(id [16]byte, now time.Time) []Change {
	ref, ok := db.byID[id]
	if !ok {
		return nil
	}
	delete(db.byID, id)
	host := db.hosts[ref.HostID]
	proc := host.procs[ref.PID]
	out := []Change{{Time: now, Kind: ParticipantRemoved, Process: ref, Participant: proc.parts[id].info}}
	delete(proc.parts, id)
	if len(proc.parts) > 0 {
		return out
	}
	delete(host.procs, ref.PID)
	db.procs--
	out = append(out, Change{Time: now, Kind: ProcessRemoved, Process: ref})
	if len(host.procs) == 0 {
		delete(db.hosts, ref.HostID)
		out = append(out, Change{Time: now, Kind: HostRemoved, Process: ProcessRef{HostID: ref.HostID}})
	}
	return out
}

// Processes lists the known processes.
func (db *DB) Processes() []ProcessRef {
	out := make([]ProcessRef, 0, db.procs)
	for hid, h := range db.hosts {
		for pid := range h.procs {
			out = append(out, ProcessRef{HostID: hid, PID: pid})
		}
	}
	return out
}

// Echo records an answered echo call of process ref.
func (db *DB) Echo(ref ProcessRef, s Sample, now time.Time) []Change {
	host, proc := db.lookup(ref)
	if proc == nil {
		return nil
	}
	if s.valid() {
		for _, t := range []*tracker{&proc.offset, &host.offset} {
			t.add(s.Offset())
		}
		for _, t := range []*tracker{&proc.latency, &host.latency} {
			t.add(s.Latency())
		}
	}
	host.lastSeen, proc.info.LastSeen = now, now
	return db.setState(proc, ref, StateRunning, now)
}

// NoReply records an echo call of process ref that timed out.
func (db *DB) NoReply(ref ProcessRef, now time.Time) []Change {
	_, proc := db.lookup(ref)
	if proc == nil {
		return nil
	}
	proc.offset.reset()
	proc.latency.reset()
	return db.setState(proc, ref, StateCrashed, now)
}

func (db *DB) lookup(ref ProcessRef) (*hostEntry, *procEntry) {
	host := db.hosts[ref.HostID]
	if host == nil {
		return nil, nil
	}
	return host, host.procs[ref.PID]
}

func (db *DB) setState(proc *procEntry, ref ProcessRef, state string, now time.Time) []Change {
	if proc.info.State == state {
		return nil
	}
	proc.info.State = state
	return []Change{{Time: now, Kind: StateChanged, Process: ref, State: state}}
}

// cut bounds a string field to maxField bytes.
func cut(s string) string {
	if len(s) > maxField {
		return s[:maxField]
	}
	return s
}

// cutList bounds a repeated field to maxList entries of maxField bytes.
func cutList(l []string) []string {
	out := make([]string, 0, min(len(l), maxList))
	for _, s := range l[:min(len(l), maxList)] {
		out = append(out, cut(s))
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
