package notification

import (
	"fmt"

	"github.com/rsbd/rsbd/scope"
)

// Decoder decodes a stream of Notifications as DecodeNotification does,
// with fewer allocations: events on a scope it decoded recently share that
// scope's string, and DecodeAlias lets an event's Data alias the input
// instead of copying it. The zero Decoder is ready; it is not safe for
// concurrent use.
type Decoder struct {
	scopes scope.Cache
	// hint is the scope Hint named, tried before the cache: a router's
	// events on ever new scopes then cost one comparison, not a search.
	hint scope.Scope
}

// Decode decodes b into a new Event that shares no memory with b. It
// accepts, rejects and returns exactly what DecodeNotification does.
func (d *Decoder) Decode(b []byte) (*Event, error) { return d.decode(b, false) }

// DecodeAlias is Decode, except that the returned Event's Data aliases b
// (capacity-limited, so an append to it reallocates). The caller hands b
// over: it must never modify or reuse b while the event may be in use.
func (d *Decoder) DecodeAlias(b []byte) (*Event, error) { return d.decode(b, true) }

// DecodeAliasInto is DecodeAlias decoding into *dst, which it overwrites
// whole, instead of into a new Event: a caller done with each event before
// the next decode saves an allocation per event. On error *dst is left as
// it was.
func (d *Decoder) DecodeAliasInto(dst *Event, b []byte) error {
	nd := notificationDecoder{alias: true, scopes: d}
	if err := nd.run(b); err != nil {
		return err
	}
	nd.placeInto(dst)
	return nil
}

func (d *Decoder) decode(b []byte, alias bool) (*Event, error) {
	nd := notificationDecoder{alias: alias, scopes: d}
	if err := nd.run(b); err != nil {
		return nil, err
	}
	return nd.place(), nil
}

// Hint tells d a scope the next event is likely on, already parsed (a
// router parsed the frame's scope before decoding it): an event whose
// scope field reads exactly sc's normalized form takes sc without parsing
// or allocating. Any other scope field is parsed as without the hint.
func (d *Decoder) Hint(sc scope.Scope) {
	d.hint = sc
}

// scope parses a scope field, reusing a recently parsed equal one.
func (d *Decoder) scope(b []byte) (scope.Scope, error) {
	if !d.hint.IsZero() && d.hint.String() == string(b) {
		return d.hint, nil
	}
	if b == nil {
		return parseScope(nil)
	}
	sc, err := d.scopes.ParseBytes(b)
	if err != nil {
		return scope.Scope{}, fmt.Errorf("%w: %w", ErrBadScope, err)
	}
	return sc, nil
}
