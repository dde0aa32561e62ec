package introspection

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// DaemonsScope is where daemons are surveyed: a void SURVEY event there is
// answered by every daemon with a REPLY on DaemonsScope/<name>/ whose first
// cause is the survey and whose payload is its DaemonStatus as JSON
// (utf-8-string).
var DaemonsScope = scope.MustParse("/__rsb/rsbd/daemons/")

// DaemonStatus is a daemon's view of itself and the cluster.
type DaemonStatus struct {
	Name     string    `json:"name"`
	Hostname string    `json:"hostname"`
	PID      int       `json:"pid"`
	Version  string    `json:"version"`
	Started  time.Time `json:"started"`
	Gossip   string    `json:"gossip-addr"`
	Data     string    `json:"data-addr,omitempty"`
	Socket   string    `json:"socket-addr,omitempty"`
	// Peers are the memberlist members the daemon sees.
	Peers []Peer `json:"peers"`
	// Listening are the scopes its socket clients listen to (all of them
	// for "/"), JoinedGroups the multicast groups it receives.
	Listening    []string `json:"listening"`
	JoinedGroups int      `json:"joined-groups"`
	Connections  int      `json:"connections"`
	// Traffic counts events and bytes by direction and path, with their
	// rates since the previous status.
	Traffic []Traffic `json:"traffic"`
	// Drops counts dropped events and datagrams by reason.
	Drops map[string]uint64 `json:"drops"`
	// Received are the multicast groups the daemon receives (joined),
	// Sent those it sends on, each with the scopes it serves there when
	// the daemon knows them.
	Received []Group `json:"received-groups,omitempty"`
	Sent     []Group `json:"sent-groups,omitempty"`
	// Scopes is the traffic of the daemon's local clients by scope, the
	// busiest first; a row with Scope OtherScopes sums the rest.
	Scopes []ScopeTraffic `json:"scopes,omitempty"`
}

// OtherScopes is the Scope of the ScopeTraffic row that sums the scopes a
// daemon does not list one by one.
const OtherScopes = "(other)"

// Group is a multicast group address a daemon uses.
type Group struct {
	Address string   `json:"address"`
	Scopes  []string `json:"scopes,omitempty"`
}

// ScopeTraffic is the traffic of one scope at a daemon: the events its
// local clients published there and those it delivered to them from its
// peers, in total and as rates since the previous status.
type ScopeTraffic struct {
	Scope              string  `json:"scope"`
	PublishedEvents    uint64  `json:"published-events"`
	PublishedBytes     uint64  `json:"published-bytes"`
	PublishedEventRate float64 `json:"published-events-per-second"`
	PublishedByteRate  float64 `json:"published-bytes-per-second"`
	DeliveredEvents    uint64  `json:"delivered-events"`
	DeliveredBytes     uint64  `json:"delivered-bytes"`
	DeliveredEventRate float64 `json:"delivered-events-per-second"`
	DeliveredByteRate  float64 `json:"delivered-bytes-per-second"`
}

// Peer is one member of a daemon's cluster.
type Peer struct {
	Name   string `json:"name"`
	Gossip string `json:"gossip-addr"`
	Data   string `json:"data-addr,omitempty"`
}

// Traffic is one direction and path of a daemon's events.
type Traffic struct {
	Direction string  `json:"direction"` // "in" or "out"
	Path      string  `json:"path"`
	Events    uint64  `json:"events"`
	Bytes     uint64  `json:"bytes"`
	EventRate float64 `json:"events-per-second"`
	ByteRate  float64 `json:"bytes-per-second"`
}

// DaemonServer answers daemon surveys for one daemon.
type DaemonServer struct {
	listener *client.Listener
	replier  *client.Informer
	status   func() DaemonStatus
	name     string
}

// ServeDaemon answers surveys on DaemonsScope with status() until Close.
// The listener is announced (a daemon shows in introspection as a process
// with a listener on DaemonsScope).
func ServeDaemon(bus *client.Bus, name string, status func() DaemonStatus) (*DaemonServer, error) {
	s := &DaemonServer{status: status, name: name}
	sc, err := scope.Parse(DaemonsScope.String() + scopeComponent(name) + "/")
	if err != nil {
		return nil, err
	}
	if s.replier, err = bus.NewInformer(sc); err != nil {
		return nil, err
	}
	s.listener, err = bus.NewListener(DaemonsScope, client.WithReservedAnnouncement(),
		client.WithFilter(client.MethodFilter(client.MethodSurvey), exactScope(DaemonsScope)),
		client.WithQueue(16, client.DropOldest))
	if err != nil {
		s.replier.Close()
		return nil, err
	}
	s.listener.AddHandler(s.answer)
	return s, nil
}

// answer replies to one survey.
func (s *DaemonServer) answer(ev *client.Event) error {
	data, err := json.Marshal(s.status())
	if err != nil {
		return err
	}
	rep := &client.Event{}
	rep.Method, rep.WireSchema, rep.Data = client.MethodReply, notification.SchemaUTF8String, data
	rep.Causes = []notification.EventID{ev.ID}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return s.replier.PublishEvent(ctx, rep)
}

// Dropped counts the surveys not answered because the server's queue was
// full.
func (s *DaemonServer) Dropped() uint64 { return s.listener.Stats().Dropped }

// Close stops answering. It is idempotent.
func (s *DaemonServer) Close() error {
	s.listener.Close()
	s.replier.Close()
	return nil
}

// exactScope passes events on sc itself, not its sub-scopes.
func exactScope(sc scope.Scope) client.Filter {
	return func(ev *notification.Event) bool { return ev.Scope == sc }
}

// SurveyDaemons asks every daemon of the cluster bus reaches for its
// status and returns the replies that came within wait, sorted by name.
func SurveyDaemons(ctx context.Context, bus *client.Bus, wait time.Duration) ([]DaemonStatus, error) {
	var mu sync.Mutex
	byName := make(map[string]DaemonStatus)
	var surveyID notification.EventID
	ready := make(chan struct{})
	l, err := bus.NewListener(DaemonsScope, client.WithReservedAnnouncement(),
		client.WithFilter(client.MethodFilter(client.MethodReply)), client.WithQueue(maxDaemons, client.DropNewest))
	if err != nil {
		return nil, err
	}
	defer l.Close()
	l.AddHandler(func(ev *client.Event) error {
		<-ready
		if len(ev.Causes) == 0 || ev.Causes[0] != surveyID || len(ev.Data) > maxDaemonStatus {
			return nil
		}
		st, err := ParseDaemonStatus(ev.Data)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if len(byName) < maxDaemons {
			byName[st.Name] = st
		}
		return nil
	})
	inf, err := bus.NewInformer(DaemonsScope)
	if err != nil {
		close(ready)
		return nil, err
	}
	defer inf.Close()
	ev := &client.Event{}
	ev.Method = client.MethodSurvey
	err = inf.PublishEvent(ctx, ev)
	surveyID = ev.ID
	close(ready)
	if err != nil {
		return nil, fmt.Errorf("introspection: daemon survey: %w", err)
	}
	select {
	case <-time.After(wait):
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	out := make([]DaemonStatus, 0, len(byName))
	for _, st := range byName {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b DaemonStatus) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ParseDaemonStatus decodes a daemon's status reply, bounding its lists.
func ParseDaemonStatus(data []byte) (DaemonStatus, error) {
	var st DaemonStatus
	if len(data) > maxDaemonStatus {
		return st, fmt.Errorf("%w: daemon status of %d bytes", ErrMalformed, len(data))
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("%w: daemon status: %w", ErrMalformed, err)
	}
	if st.Name == "" {
		return st, fmt.Errorf("%w: daemon status without a name", ErrMalformed)
	}
	st.Peers = st.Peers[:min(len(st.Peers), maxDaemons)]
	st.Listening = st.Listening[:min(len(st.Listening), maxStatusScopes)]
	st.Traffic = st.Traffic[:min(len(st.Traffic), maxStatusScopes)]
	st.Scopes = st.Scopes[:min(len(st.Scopes), maxStatusScopes)]
	st.Received = boundGroups(st.Received)
	st.Sent = boundGroups(st.Sent)
	return st, nil
}

// WriteDaemons prints daemon statuses as a tree: each daemon with its
// addresses, peers, listening scopes, groups, traffic by path and scope,
// and drops.
func WriteDaemons(w io.Writer, ds []DaemonStatus, now time.Time) error {
	tw := &treeWriter{w: w, now: now}
	if len(ds) == 0 {
		tw.line("", "<no daemons answered>")
	}
	for _, d := range ds {
		tw.line("", pad(d.Name, 24)+pad(d.Hostname, 17)+"pid "+fmt.Sprint(d.PID)+", up "+duration(now.Sub(d.Started))+", "+d.Version)
		tw.line("│ ", "gossip "+d.Gossip+"  data "+orUnknown(d.Data)+"  socket "+orUnknown(d.Socket)+
			fmt.Sprintf("  clients %d  joined groups %d", d.Connections, d.JoinedGroups))
		tw.line("├─", fmt.Sprintf("peers (%d)", len(d.Peers)))
		for i, p := range d.Peers {
			node, _ := branch("│ ", i == len(d.Peers)-1)
			tw.line(node, pad(p.Name, 24)+"gossip "+p.Gossip+"  data "+orUnknown(p.Data))
		}
		tw.line("├─", "listening "+strings.Join(d.Listening, " "))
		tw.line("├─", "traffic")
		for i, t := range d.Traffic {
			node, _ := branch("│ ", i == len(d.Traffic)-1)
			tw.line(node, pad(t.Direction+" "+t.Path, 14)+fmt.Sprintf("%10d events %12d bytes %10.1f ev/s %12.1f B/s",
				t.Events, t.Bytes, t.EventRate, t.ByteRate))
		}
		writeGroups(tw, "received groups", d.Received)
		writeGroups(tw, "sent groups", d.Sent)
		writeScopes(tw, d.Scopes)
		tw.line("└─", "drops "+formatDrops(d.Drops))
	}
	return tw.err
}

func formatDrops(drops map[string]uint64) string {
	if len(drops) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(drops))
	for k := range drops {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, drops[k]))
	}
	return strings.Join(parts, " ")
}

// scopeComponent derives a scope component from text: every character
// outside [-_a-zA-Z0-9] becomes '_'.
func scopeComponent(text string) string {
	b := []byte(text)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}
