package frame

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/notification"
)

// AttrTTL is the attribute giving an EVENT its time to live, in
// milliseconds from its time attribute.
const AttrTTL = "emttl"

// attrContentEncoding is a CloudEvents 0.3 attribute the reference drops
// when it turns a frame into a CloudEvent.
const attrContentEncoding = "datacontentencoding"

// FromCloudEvent returns the EVENT frame of e: its attributes (Attrs, with
// specversion) and its data, which the frame shares. e is checked with
// Validate first.
func FromCloudEvent(e *cloudevent.Event) (*Frame, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	ceAttrs := e.Attrs()
	f := &Frame{Type: Event, Attrs: make([]Attr, len(ceAttrs)), Data: e.Data}
	for i, a := range ceAttrs {
		f.Attrs[i] = Attr(a)
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// CloudEvent returns the CloudEvent an EVENT frame carries, which shares
// the frame's data. specversion, when present, must be "1.0";
// datacontentencoding is dropped; a name that repeats takes its last
// value. The event is checked with Validate.
func (f *Frame) CloudEvent() (*cloudevent.Event, error) {
	if f.Type != Event {
		return nil, fmt.Errorf("%w: %s", ErrNotEvent, f.Type)
	}
	e := &cloudevent.Event{Data: f.Data}
	for _, a := range f.Attrs {
		if a.Name == attrContentEncoding {
			continue
		}
		if err := e.SetAttr(a.Name, a.Value); err != nil {
			return nil, err
		}
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// FromRSB returns the EVENT frame of an RSB event, mapped by
// cloudevent.FromRSB.
func FromRSB(ev *notification.Event) (*Frame, error) {
	e, err := cloudevent.FromRSB(ev)
	if err != nil {
		return nil, err
	}
	return FromCloudEvent(e)
}

// RSB returns the RSB event an EVENT frame carries, mapped by
// cloudevent.Event.ToRSB; it shares the frame's data.
func (f *Frame) RSB() (*notification.Event, error) {
	e, err := f.CloudEvent()
	if err != nil {
		return nil, err
	}
	return e.ToRSB()
}

// Expired reports whether the time to live of an EVENT frame has passed at
// now: emttl milliseconds after its time attribute. A frame without emttl
// or without time never expires. A malformed emttl or time is an error
// wrapping ErrBadTTL; the caller refuses the frame.
func (f *Frame) Expired(now time.Time) (bool, error) {
	ttl, hasTTL := f.Get(AttrTTL)
	at, hasTime := f.Get(cloudevent.AttrTime)
	return expired(ttl, hasTTL, at, hasTime, now)
}

// EventExpired is Frame.Expired for a CloudEvent: whether its emttl
// extension has passed at now.
func EventExpired(e *cloudevent.Event, now time.Time) (bool, error) {
	ttl, hasTTL := e.Extensions[AttrTTL]
	return expired(ttl, hasTTL, e.Time, e.Time != "", now)
}

// expired reports whether ttl milliseconds after the time at have passed
// at now.
func expired(ttl string, hasTTL bool, at string, hasTime bool, now time.Time) (bool, error) {
	if !hasTTL {
		return false, nil
	}
	ms, err := strconv.ParseInt(ttl, 10, 64)
	if err != nil || ms < 0 {
		return false, fmt.Errorf("%w: %q", ErrBadTTL, ttl)
	}
	if !hasTime {
		return false, nil
	}
	t, err := cloudevent.ParseTime(at)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrBadTTL, err)
	}
	const maxMs = int64(1<<63-1) / int64(time.Millisecond)
	return now.Sub(t) > time.Duration(min(ms, maxMs))*time.Millisecond, nil
}
