package cloudevent

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rsbd/rsbd/notification"
)

// Names of the extensions that carry RSB metadata (see the package
// documentation). Every name starting with "rsb" belongs to this mapping.
const (
	ExtSender      = "rsbsender"
	ExtSeq         = "rsbseq"
	ExtMethod      = "rsbmethod"
	ExtWireSchema  = "rsbwireschema"
	ExtCauses      = "rsbcauses"
	ExtCreateTime  = "rsbcreatetime"
	ExtSendTime    = "rsbsendtime"
	ExtReceiveTime = "rsbreceivetime"
	ExtDeliverTime = "rsbdelivertime"
	ExtUserInfos   = "rsbuserinfos"
	ExtUserTimes   = "rsbusertimes"
	ExtEmpty       = "rsbempty"
)

// UserInfoPrefix starts the user info keys that hold CloudEvents
// attributes without an RSB counterpart: "ce:source", "ce:<extension>".
const UserInfoPrefix = "ce:"

// sourcePrefix starts the source of an RSB event: its sender's UUID URN.
const sourcePrefix = "urn:uuid:"

// The range of create times the time attribute holds exactly: RFC 3339 has
// four-digit years.
var (
	minTimeMicros = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxTimeMicros = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
)

// emptyFields names the optional notification fields rsbempty lists, with
// their presence bits.
var emptyFields = [...]struct {
	name string
	bit  notification.Presence
}{
	{"method", notification.HasMethod}, {"wireschema", notification.HasWireSchema},
	{"data", notification.HasData}, {"metadata", notification.HasMetaData},
	{"receivetime", notification.HasReceiveTime}, {"delivertime", notification.HasDeliverTime},
}

// FromRSB returns the CloudEvent of ev (see the package documentation). It
// fails, wrapping ErrRSB, when a string of ev is not valid UTF-8, and with
// Validate's errors when the result breaks a rule or limit (a method with
// control characters, user infos longer than MaxValueBytes).
func FromRSB(ev *notification.Event) (*Event, error) {
	if err := checkUTF8(ev); err != nil {
		return nil, err
	}
	sender := notification.FormatUUID(ev.ID.SenderID)
	e := &Event{
		ID:              notification.FormatUUID(ev.ID.UUID()),
		Source:          sourcePrefix + sender,
		Type:            DefaultType,
		Subject:         ev.Scope.String(),
		DataContentType: ContentType(ev.WireSchema),
		Data:            ev.Data,
		Extensions:      map[string]string{ExtSender: sender, ExtSeq: strconv.FormatUint(uint64(ev.ID.SequenceNumber), 10)},
	}
	for name, v := range lifted(ev.MetaData.UserInfos) {
		setLifted(e, name, v)
	}
	ext := e.Extensions
	if ev.Method != "" {
		ext[ExtMethod] = ev.Method
	}
	if WireSchema(e.DataContentType) != ev.WireSchema {
		ext[ExtWireSchema] = ev.WireSchema
	}
	if len(ev.Causes) > 0 {
		ids := make([]string, len(ev.Causes))
		for i, c := range ev.Causes {
			ids[i] = c.String()
		}
		ext[ExtCauses] = strings.Join(ids, " ")
	}
	fromRSBTimes(e, &ev.MetaData)
	if len(ev.MetaData.UserInfos) > 0 {
		ext[ExtUserInfos] = string(appendInfos(nil, ev.MetaData.UserInfos))
	}
	if len(ev.MetaData.UserTimes) > 0 {
		ext[ExtUserTimes] = string(appendTimes(nil, ev.MetaData.UserTimes))
	}
	if empty := emptyList(ev); empty != "" {
		ext[ExtEmpty] = empty
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// fromRSBTimes sets time and the time extensions from m.
func fromRSBTimes(e *Event, m *notification.MetaData) {
	if ct := m.CreateTime; ct != 0 {
		if ct >= minTimeMicros && ct <= maxTimeMicros {
			e.Time = FormatTime(time.UnixMicro(ct))
		} else {
			e.Extensions[ExtCreateTime] = strconv.FormatInt(ct, 10)
		}
	}
	for _, t := range [...]struct {
		name string
		us   int64
	}{{ExtSendTime, m.SendTime}, {ExtReceiveTime, m.ReceiveTime}, {ExtDeliverTime, m.DeliverTime}} {
		if t.us != 0 {
			e.Extensions[t.name] = strconv.FormatInt(t.us, 10)
		}
	}
}

// checkUTF8 fails when a string field of ev is not valid UTF-8: no
// CloudEvent can carry it.
func checkUTF8(ev *notification.Event) error {
	bad := func(what string) error { return fmt.Errorf("%w: %s is not valid UTF-8", ErrRSB, what) }
	if !utf8.ValidString(ev.Method) {
		return bad("method")
	}
	if !utf8.ValidString(ev.WireSchema) {
		return bad("wire schema")
	}
	for _, u := range ev.MetaData.UserInfos {
		if !utf8.ValidString(u.Key) || !utf8.ValidString(u.Value) {
			return bad("a user info")
		}
	}
	for _, u := range ev.MetaData.UserTimes {
		if !utf8.ValidString(u.Key) {
			return bad("a user time key")
		}
	}
	return nil
}

// liftedName returns the attribute a user info key "ce:<name>" with value
// v stands for, or "" when it stands for none: the name must be id,
// source, type, dataschema or a valid extension name outside the rsb…
// names, and v a valid non-empty value.
func liftedName(key, v string) string {
	name, ok := strings.CutPrefix(key, UserInfoPrefix)
	if !ok || v == "" || len(v) > MaxValueBytes || !ValidString(v) {
		return ""
	}
	switch name {
	case AttrID, AttrSource, AttrType, AttrDataSchema:
		return name
	}
	if ValidName(name) != nil || isContextName(name) || strings.HasPrefix(name, "rsb") {
		return ""
	}
	return name
}

// lifted returns the attributes the user infos stand for: for each name,
// the first "ce:<name>" user info that liftedName accepts and whose value
// is valid for the attribute (a URI-reference for source, an absolute URI
// for dataschema).
func lifted(infos []notification.UserInfo) map[string]string {
	var m map[string]string
	for _, u := range infos {
		name := liftedName(u.Key, u.Value)
		if name == "" {
			continue
		}
		if _, seen := m[name]; seen {
			continue
		}
		if validAttr(Attr{name, u.Value}) != nil {
			continue
		}
		if m == nil {
			m = make(map[string]string)
		}
		m[name] = u.Value
	}
	return m
}

// setLifted sets attribute name (id, source, type, dataschema or an
// extension) to v.
func setLifted(e *Event, name, v string) {
	switch name {
	case AttrID:
		e.ID = v
	case AttrSource:
		e.Source = v
	case AttrType:
		e.Type = v
	case AttrDataSchema:
		e.DataSchema = v
	default:
		e.Extensions[name] = v
	}
}

// emptyList returns the rsbempty value of ev: the optional fields on the
// wire although empty, whose presence the other attributes do not show.
func emptyList(ev *notification.Event) string {
	m := &ev.MetaData
	hasMeta := m.CreateTime != 0 || m.SendTime != 0 || m.ReceiveTime != 0 || m.DeliverTime != 0 ||
		len(m.UserInfos) > 0 || len(m.UserTimes) > 0 ||
		ev.Present&(notification.HasReceiveTime|notification.HasDeliverTime) != 0
	empty := [...]bool{
		ev.Method == "", ev.WireSchema == "", len(ev.Data) == 0, !hasMeta,
		m.ReceiveTime == 0, m.DeliverTime == 0,
	}
	var names []string
	for i, f := range emptyFields {
		if ev.Present&f.bit != 0 && empty[i] {
			names = append(names, f.name)
		}
	}
	return strings.Join(names, " ")
}
