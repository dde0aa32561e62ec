package testutil

import (
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// Event returns an event on scope sc with wire schema "bytes", the given
// payload and an id of a fixed sender and sequence number seq: the event
// the tests of the data path publish.
func Event(sc string, seq uint32, data []byte) *notification.Event {
	return &notification.Event{
		Scope:      scope.MustParse(sc),
		WireSchema: "bytes",
		Data:       data,
		ID:         notification.EventID{SenderID: [16]byte{1, 2, 3}, SequenceNumber: seq},
	}
}
