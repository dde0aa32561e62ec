package cloudevent

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// ToRSB returns the RSB event of e (see the package documentation). The
// event shares e.Data. It fails with Validate's errors, with ErrNoScope
// when the subject is not a scope, and with ErrRSB when an rsb… extension
// does not parse.
func (e *Event) ToRSB() (*notification.Event, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	sc, err := scope.Parse(e.Subject)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoScope, err)
	}
	ext := e.Extensions
	ev := &notification.Event{Scope: sc, Method: ext[ExtMethod], Data: e.Data}
	hasID, err := rsbID(ext, &ev.ID)
	if err != nil {
		return nil, err
	}
	ev.WireSchema = WireSchema(e.DataContentType)
	if ws, ok := ext[ExtWireSchema]; ok {
		ev.WireSchema = ws
	}
	if ev.Causes, err = parseCauses(ext[ExtCauses]); err != nil {
		return nil, err
	}
	if err := e.toRSBTimes(&ev.MetaData); err != nil {
		return nil, err
	}
	if ev.MetaData.UserInfos, err = parseInfos(ext[ExtUserInfos]); err != nil {
		return nil, err
	}
	if ev.MetaData.UserTimes, err = parseTimes(ext[ExtUserTimes]); err != nil {
		return nil, err
	}
	e.keepAttrs(&ev.MetaData, hasID, ev.ID)
	if ev.Present, err = parseEmpty(ext[ExtEmpty]); err != nil {
		return nil, err
	}
	return ev, nil
}

// rsbID sets id from rsbsender and rsbseq, which come together or not at
// all, and reports whether they were there.
func rsbID(ext map[string]string, id *notification.EventID) (bool, error) {
	sender, hasSender := ext[ExtSender]
	seq, hasSeq := ext[ExtSeq]
	if hasSender != hasSeq {
		return false, fmt.Errorf("%w: %s and %s come together", ErrRSB, ExtSender, ExtSeq)
	}
	if !hasSender {
		return false, nil
	}
	u, err := notification.ParseUUID(sender)
	if err != nil {
		return false, fmt.Errorf("%w: %s: %w", ErrRSB, ExtSender, err)
	}
	n, err := strconv.ParseUint(seq, 10, 32)
	if err != nil {
		return false, fmt.Errorf("%w: %s %q is not a 32-bit sequence number", ErrRSB, ExtSeq, truncate(seq))
	}
	*id = notification.EventID{SenderID: u, SequenceNumber: uint32(n)}
	return true, nil
}

// parseCauses parses rsbcauses: event ids separated by single spaces.
func parseCauses(s string) ([]notification.EventID, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, " ")
	causes := make([]notification.EventID, len(parts))
	for i, p := range parts {
		id, err := notification.ParseEventID(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrRSB, ExtCauses, err)
		}
		causes[i] = id
	}
	return causes, nil
}

// toRSBTimes sets m's timestamps from time and the time extensions.
func (e *Event) toRSBTimes(m *notification.MetaData) error {
	if e.Time != "" {
		t, err := ParseTime(e.Time)
		if err != nil {
			return err
		}
		m.CreateTime = t.UnixMicro()
	}
	for _, f := range [...]struct {
		name string
		dst  *int64
	}{
		{ExtCreateTime, &m.CreateTime}, {ExtSendTime, &m.SendTime},
		{ExtReceiveTime, &m.ReceiveTime}, {ExtDeliverTime, &m.DeliverTime},
	} {
		if v, ok := e.Extensions[f.name]; ok {
			us, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("%w: %s %q is not microseconds", ErrRSB, f.name, truncate(v))
			}
			*f.dst = us
		}
	}
	return nil
}

// parseInfos parses rsbuserinfos: a JSON array of [key, value] string
// pairs.
func parseInfos(s string) ([]notification.UserInfo, error) {
	pairs, err := parsePairs(ExtUserInfos, s)
	if err != nil || pairs == nil {
		return nil, err
	}
	infos := make([]notification.UserInfo, len(pairs))
	for i, p := range pairs {
		if err := json.Unmarshal(p[0], &infos[i].Key); err != nil {
			return nil, fmt.Errorf("%w: %s: key %d is not a string", ErrRSB, ExtUserInfos, i)
		}
		if err := json.Unmarshal(p[1], &infos[i].Value); err != nil {
			return nil, fmt.Errorf("%w: %s: value %d is not a string", ErrRSB, ExtUserInfos, i)
		}
	}
	return infos, nil
}

// parseTimes parses rsbusertimes: a JSON array of [key, microseconds]
// pairs.
func parseTimes(s string) ([]notification.UserTime, error) {
	pairs, err := parsePairs(ExtUserTimes, s)
	if err != nil || pairs == nil {
		return nil, err
	}
	times := make([]notification.UserTime, len(pairs))
	for i, p := range pairs {
		if err := json.Unmarshal(p[0], &times[i].Key); err != nil {
			return nil, fmt.Errorf("%w: %s: key %d is not a string", ErrRSB, ExtUserTimes, i)
		}
		t, err := strconv.ParseUint(string(p[1]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: time %d is not microseconds", ErrRSB, ExtUserTimes, i)
		}
		times[i].Time = t
	}
	return times, nil
}

// parsePairs parses a JSON array of two-element arrays; nil for "".
func parsePairs(name, s string) ([][]json.RawMessage, error) {
	if s == "" {
		return nil, nil
	}
	var pairs [][]json.RawMessage
	if err := json.Unmarshal([]byte(s), &pairs); err != nil {
		return nil, fmt.Errorf("%w: %s is not a JSON array of pairs", ErrRSB, name)
	}
	for i, p := range pairs {
		if len(p) != 2 {
			return nil, fmt.Errorf("%w: %s: entry %d is not a pair", ErrRSB, name, i)
		}
	}
	return pairs, nil
}

// keepAttrs records in m's user infos the attributes that FromRSB would not
// give back otherwise: id, source, type, dataschema and extensions outside
// the rsb… names whose value differs from what m's "ce:" user infos (or the
// RSB defaults) already give.
func (e *Event) keepAttrs(m *notification.MetaData, hasID bool, id notification.EventID) {
	want := lifted(m.UserInfos)
	def := map[string]string{AttrType: DefaultType}
	if hasID {
		def[AttrID] = notification.FormatUUID(id.UUID())
		def[AttrSource] = sourcePrefix + notification.FormatUUID(id.SenderID)
	}
	keep := func(name, v string) {
		if v == "" {
			return
		}
		w, ok := want[name]
		if !ok {
			w = def[name]
		}
		if v != w {
			m.SetUserInfo(UserInfoPrefix+name, v)
		}
	}
	keep(AttrID, e.ID)
	keep(AttrSource, e.Source)
	keep(AttrType, e.Type)
	keep(AttrDataSchema, e.DataSchema)
	for _, name := range slices.Sorted(maps.Keys(e.Extensions)) {
		if !strings.HasPrefix(name, "rsb") {
			keep(name, e.Extensions[name])
		}
	}
}

// parseEmpty parses rsbempty: field names separated by single spaces.
func parseEmpty(s string) (notification.Presence, error) {
	if s == "" {
		return 0, nil
	}
	var p notification.Presence
outer:
	for _, name := range strings.Split(s, " ") {
		for _, f := range emptyFields {
			if f.name == name {
				p |= f.bit
				continue outer
			}
		}
		return 0, fmt.Errorf("%w: %s names %q", ErrRSB, ExtEmpty, truncate(name))
	}
	return p, nil
}
