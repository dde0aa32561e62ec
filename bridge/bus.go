package bridge

import (
	"fmt"
	"maps"
	"strings"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// User info keys the bridges set on the RSB events they publish.
const (
	// MarkerKey is the cycle marker: the name of the bridge that brought
	// the event onto the bus.
	MarkerKey = "rsbd:bridge"
	// SubjectKey holds the event's own CloudEvents subject: on the bus the
	// subject is the scope.
	SubjectKey = "rsbd:subject"
)

// ExtDeadLetterReason is the extension a dead letter carries its Reason
// in (on the bus as the user info "ce:deadletterreason").
const ExtDeadLetterReason = "deadletterreason"

// ToBus returns the RSB event of an inbound event e, published on sc by
// the bridge named bridge: e's attributes by package cloudevent's
// mapping, its subject in SubjectKey, the bridge in MarkerKey (none for
// ""). e is not
// changed.
func ToBus(e *cloudevent.Event, sc scope.Scope, bridge string) (*notification.Event, error) {
	c := *e
	c.Subject = sc.String()
	c.Extensions = maps.Clone(e.Extensions)
	ev, err := c.ToRSB()
	if err != nil {
		return nil, err
	}
	if e.Subject != "" {
		ev.MetaData.SetUserInfo(SubjectKey, e.Subject)
	}
	if bridge != "" {
		ev.MetaData.SetUserInfo(MarkerKey, bridge)
	}
	if len(ev.Data) == 0 {
		ev.Data = nil
	}
	return ev, nil
}

// FromBus returns the outbound CloudEvent of an RSB event for the bridge
// named bridge. An event that bridge brought in gives ErrCycle. The
// bridges' user infos are removed; an event that came from a CloudEvent
// (it carries "ce:id", or another bridge's marker) gets back its own subject (or none) and loses the
// rsb… extensions of its RSB metadata, so it leaves as it came; any other
// event keeps them, with its scope as subject.
func FromBus(ev *notification.Event, bridge string) (*cloudevent.Event, error) {
	infos := ev.MetaData.UserInfos
	var subject string
	hasSubject, fromCE := false, false
	kept := make([]notification.UserInfo, 0, len(infos))
	for _, u := range infos {
		switch {
		case u.Key == MarkerKey:
			if u.Value == bridge {
				return nil, fmt.Errorf("%w: %s", ErrCycle, bridge)
			}
			fromCE = true
		case u.Key == SubjectKey:
			subject, hasSubject = u.Value, true
		default:
			fromCE = fromCE || u.Key == cloudevent.UserInfoPrefix+cloudevent.AttrID
			kept = append(kept, u)
		}
	}
	c := *ev
	c.MetaData.UserInfos = kept
	e, err := cloudevent.FromRSB(&c)
	if err != nil {
		return nil, err
	}
	if !fromCE {
		return e, nil
	}
	e.Subject = ""
	if hasSubject {
		e.Subject = subject
	}
	for name := range e.Extensions {
		if strings.HasPrefix(name, "rsb") {
			delete(e.Extensions, name)
		}
	}
	if len(e.Extensions) == 0 {
		e.Extensions = nil
	}
	return e, nil
}
