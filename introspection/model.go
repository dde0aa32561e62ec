package introspection

import "time"

// Process and host states, as the RSB tools print them.
const (
	StateUnknown = "UNKNOWN"
	StateRunning = "RUNNING"
	StateCrashed = "CRASHED"
	StateUp      = "UP"
	StateDown    = "DOWN"
)

// Snapshot is what a DB knows at one moment: hosts sorted by hostname,
// their processes by id, their participants by scope. Its JSON form is
// the one of rsb-tools-cl's /api/introspection/snapshot: every level
// nests the next as "children", keys are lowercase with dashes, durations
// are seconds.
type Snapshot struct {
	Hosts []Host `json:"children"`
}

// Host is one host of a Snapshot.
type Host struct {
	ID              string `json:"id"`
	Hostname        string `json:"hostname"`
	MachineType     string `json:"machine-type,omitempty"`
	MachineVersion  string `json:"machine-version,omitempty"`
	SoftwareType    string `json:"software-type,omitempty"`
	SoftwareVersion string `json:"software-version,omitempty"`
	// State is StateUp while a process of the host answers echo calls,
	// StateDown when none does, else StateUnknown.
	State string `json:"state"`
	// ClockOffset and Latency are the medians of the echo samples of
	// the host's processes; nil before the first sample.
	ClockOffset *Seconds  `json:"clock-offset"`
	Latency     *Seconds  `json:"latency"`
	LastSeen    time.Time `json:"most-recent-activity"`
	Processes   []Process `json:"children"`
}

// Process is one process of a Snapshot.
type Process struct {
	ID           string        `json:"process-id"`
	ProgramName  string        `json:"program-name"`
	Arguments    []string      `json:"commandline-arguments"`
	DisplayName  string        `json:"display-name,omitempty"`
	StartTime    time.Time     `json:"start-time"`
	User         string        `json:"executing-user,omitempty"`
	RSBVersion   string        `json:"rsb-version,omitempty"`
	State        string        `json:"state"`
	Transports   []string      `json:"transports"`
	ClockOffset  *Seconds      `json:"clock-offset"`
	Latency      *Seconds      `json:"latency"`
	LastSeen     time.Time     `json:"most-recent-activity"`
	Participants []Participant `json:"children"`
}

// Participant is one participant of a Snapshot, with the participants it
// contains (a server's methods) as Children.
type Participant struct {
	Kind       string        `json:"kind"`
	ID         string        `json:"id"`
	Parent     string        `json:"parent,omitempty"`
	Scope      string        `json:"scope"`
	Type       string        `json:"type,omitempty"`
	Transports []string      `json:"transports"`
	Children   []Participant `json:"children"`
}

// Seconds is a duration that JSON shows in seconds.
type Seconds float64

// secondsOf converts d.
func secondsOf(d time.Duration) *Seconds {
	s := Seconds(d.Seconds())
	return &s
}

// Duration returns s as a time.Duration.
func (s Seconds) Duration() time.Duration { return time.Duration(float64(s) * float64(time.Second)) }

// Count returns the numbers of hosts, processes and participants in s.
func (s *Snapshot) Count() (hosts, processes, participants int) {
	var count func([]Participant) int
	count = func(ps []Participant) int {
		n := len(ps)
		for _, p := range ps {
			n += count(p.Children)
		}
		return n
	}
	for _, h := range s.Hosts {
		hosts++
		for _, p := range h.Processes {
			processes++
			participants += count(p.Participants)
		}
	}
	return hosts, processes, participants
}
