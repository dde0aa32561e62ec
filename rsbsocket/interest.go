package rsbsocket

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/scope"
)

// Introspection constants of the RSB specification.
var (
	// IntrospectionScope is the root of the introspection scopes. A
	// connection with announced listeners always receives it, so surveys
	// and echo requests reach the process.
	IntrospectionScope = scope.MustParse("/__rsb/introspection/")

	// ParticipantsScope is where Hello and Bye events are published, each
	// on the sub-scope named after the participant's UUID.
	ParticipantsScope = scope.MustParse("/__rsb/introspection/participants/")
)

// Wire schemas of the introspection payloads.
const (
	HelloWireSchema = ".rsb.protocol.introspection.Hello"
	ByeWireSchema   = ".rsb.protocol.introspection.Bye"
)

// Interest is the set of scopes a connection (or the whole server) wants
// events of. An event on scope E is wanted when All is set or some scope in
// Scopes contains E.
type Interest struct {
	// All means every event is wanted; Scopes is then empty.
	All bool
	// Scopes is sorted and minimal: no entry contains another.
	Scopes []scope.Scope
}

// Matches reports whether an event on sc is wanted.
func (i Interest) Matches(sc scope.Scope) bool {
	if i.All {
		return true
	}
	for _, s := range i.Scopes {
		if s.Contains(sc) {
			return true
		}
	}
	return false
}

// minimalScopes sorts scopes and removes duplicates and every scope
// contained in another one.
func minimalScopes(scopes []scope.Scope) []scope.Scope {
	slices.SortFunc(scopes, func(a, b scope.Scope) int { return strings.Compare(a.String(), b.String()) })
	out := scopes[:0]
	for _, s := range scopes {
		// Sorted order puts a containing scope right before what it contains.
		if len(out) > 0 && out[len(out)-1].Contains(s) {
			continue
		}
		out = append(out, s)
	}
	return slices.Clip(out)
}

// matcher is an immutable, fast form of an Interest, swapped atomically.
type matcher struct {
	interest Interest
	set      map[scope.Scope]struct{} // set of Scopes when there are many
}

// newMatcher builds the matcher of in.
func newMatcher(in Interest) *matcher {
	m := &matcher{interest: in}
	if len(in.Scopes) > linearInterestMax {
		m.set = make(map[scope.Scope]struct{}, len(in.Scopes))
		for _, s := range in.Scopes {
			m.set[s] = struct{}{}
		}
	}
	return m
}

// matches reports whether an event on sc is wanted.
func (m *matcher) matches(sc scope.Scope) bool {
	if m.set == nil {
		return m.interest.Matches(sc)
	}
	var buf [16]scope.Scope
	for _, s := range sc.AppendSuperScopes(buf[:0], true) {
		if _, ok := m.set[s]; ok {
			return true
		}
	}
	return false
}

// participant is one announced participant of a connection.
type participant struct {
	scope     scope.Scope
	listening bool
}

// participants learns a connection's interest from the introspection events
// it publishes. It is a pure state machine owned by the connection's reader.
// Most connections announce one participant: it is kept inline (oneID,
// one), and a map is made only for a second, so that an idle listening
// connection does not hold a map's group of slots.
type participants struct {
	oneID      string // the only participant's id while byID is nil; "" for none
	one        participant
	byID       map[string]participant // every participant, once there were two
	limit      int
	defaultAll bool
	overflowed bool // a Hello was refused for the limit: want everything
}

// newParticipants returns an empty tracker.
func newParticipants(limit int, defaultAll bool) *participants {
	return &participants{limit: limit, defaultAll: defaultAll}
}

// lookup returns the participant of id.
func (p *participants) lookup(id []byte) (participant, bool) {
	if p.byID != nil {
		pt, ok := p.byID[string(id)]
		return pt, ok
	}
	return p.one, p.oneID != "" && p.oneID == string(id)
}

// count returns how many participants are known.
func (p *participants) count() int {
	switch {
	case p.byID != nil:
		return len(p.byID)
	case p.oneID != "":
		return 1
	}
	return 0
}

// set records participant id (not empty) as pt.
func (p *participants) set(id []byte, pt participant) {
	switch {
	case p.byID != nil:
		p.byID[string(id)] = pt
	case p.oneID == "" || p.oneID == string(id):
		p.oneID, p.one = string(id), pt
	default:
		p.byID = map[string]participant{p.oneID: p.one, string(id): pt}
		p.oneID, p.one = "", participant{}
	}
}

// forget removes participant id.
func (p *participants) forget(id []byte) {
	if p.byID != nil {
		delete(p.byID, string(id))
	} else if p.oneID == string(id) {
		p.oneID, p.one = "", participant{}
	}
}

// each calls fn for every participant.
func (p *participants) each(fn func(participant)) {
	if p.byID == nil {
		if p.oneID != "" {
			fn(p.one)
		}
		return
	}
	for _, pt := range p.byID {
		fn(pt)
	}
}

// introspectionResult tells the caller what one frame did to the tracker.
type introspectionResult int

const (
	introNone     introspectionResult = iota // not a Hello or Bye, or nothing changed
	introChanged                             // the interest may have changed
	introBad                                 // a Hello or Bye that could not be used
	introOverflow                            // a Hello refused for the participant limit
)

// observe feeds one frame published by the connection to the tracker.
func (p *participants) observe(f *frame.Frame) introspectionResult {
	if !f.Scope.IsSubScopeOf(ParticipantsScope) {
		return introNone
	}
	switch string(f.WireSchema) {
	case HelloWireSchema:
		return p.hello(f.Data)
	case ByeWireSchema:
		return p.bye(f.Data)
	}
	return introNone
}

// hello records the participant announced by a serialized Hello.
func (p *participants) hello(data []byte) introspectionResult {
	var h introspection.Hello
	if err := (proto.UnmarshalOptions{AllowPartial: true, DiscardUnknown: true}).Unmarshal(data, &h); err != nil {
		return introBad
	}
	id := h.GetId()
	if len(id) == 0 || len(id) > maxParticipantIDLen || h.GetKind() == "" || len(h.GetScope()) > maxParticipantScopeLen {
		return introBad
	}
	sc, err := scope.Parse(h.GetScope())
	if err != nil {
		return introBad
	}
	np := participant{scope: sc, listening: isListeningKind(h.GetKind())}
	old, known := p.lookup(id)
	if known && old == np {
		return introNone
	}
	if !known && p.count() >= p.limit {
		p.overflowed = true
		return introOverflow
	}
	p.set(id, np)
	return introChanged
}

// bye forgets the participant named by a serialized Bye.
func (p *participants) bye(data []byte) introspectionResult {
	var b introspection.Bye
	if err := (proto.UnmarshalOptions{AllowPartial: true, DiscardUnknown: true}).Unmarshal(data, &b); err != nil || len(b.GetId()) == 0 {
		return introBad
	}
	if _, ok := p.lookup(b.GetId()); !ok {
		return introNone
	}
	p.forget(b.GetId())
	return introChanged
}

// isListeningKind reports whether a participant of this kind receives
// events on its scope. Only informers do not; unknown kinds are assumed to
// listen, so that an unfamiliar participant never loses events. Kinds are
// compared case- and dash-insensitively: current RSB sends "local-server",
// older releases sent class names such as "LocalServer".
func isListeningKind(kind string) bool {
	const informer = "informer"
	i := 0
	for _, c := range []byte(kind) {
		switch {
		case c == '-' || c == '_':
			continue
		case i == len(informer) || c|0x20 != informer[i]:
			return true
		}
		i++
	}
	return i != len(informer)
}

// interest returns the connection's current interest:
//   - while a Hello was refused for the limit: everything;
//   - with at least one listening participant: the scopes of the listening
//     participants plus IntrospectionScope;
//   - otherwise, with defaultAll: everything;
//   - otherwise, with only informers announced: IntrospectionScope (the
//     process runs introspection and answers surveys);
//   - otherwise nothing.
func (p *participants) interest() Interest {
	if p.overflowed {
		return Interest{All: true}
	}
	var scopes []scope.Scope
	p.each(func(pt participant) {
		if pt.listening {
			scopes = append(scopes, pt.scope)
		}
	})
	switch {
	case len(scopes) > 0:
		return Interest{Scopes: minimalScopes(append(scopes, IntrospectionScope))}
	case p.defaultAll:
		return Interest{All: true}
	case p.count() > 0:
		return Interest{Scopes: []scope.Scope{IntrospectionScope}}
	}
	return Interest{}
}
