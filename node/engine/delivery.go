package engine

import (
	"github.com/rsbd/rsbd/node/sinks"
	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/qos"
)

// DeliveryKind says what a Delivery carries.
type DeliveryKind uint8

// The kinds of Delivery.
const (
	// DeliverBody is a serialized Notification (Body).
	DeliverBody DeliveryKind = iota
	// DeliverMsg is a reassembled Notification (Msg, Room).
	DeliverMsg
	// DeliverLoss is a loss report (Loss).
	DeliverLoss
)

// Delivery is one unit of work for the local sinks, produced by the engine
// in receive order.
type Delivery struct {
	// Kind says which of the fields below it carries.
	Kind DeliveryKind
	// Owned says Body is a copy of its own, which an event decoded from
	// it may alias (rather than a reader's buffer or a shared slab).
	Owned bool
	// Body is the serialized Notification of a DeliverBody.
	Body []byte
	// Msg is the reassembled Notification of a DeliverMsg.
	Msg *rsbpb.Notification
	// Room is the buffer Msg's Data lies in, with room around it
	// (fragmentation.Assembler.TakeRoom), or nil.
	Room []byte
	// Loss is the report of a DeliverLoss.
	Loss *qos.LossReport
	// Size is the event's serialized size (0 for a loss).
	Size int
}

// deliveryBytes sums the sizes of ds.
func deliveryBytes(ds []Delivery) int {
	n := 0
	for i := range ds {
		n += ds[i].Size
	}
	return n
}

// stabilize copies the bodies of ds out of a reader's buffer into slabs
// that the decoded events may keep (their Data aliases them; see
// sinks.BodySlabs). Decoding is left to the delivering goroutine, off the
// engine lock.
func stabilize(ds []Delivery, slabs *sinks.BodySlabs) {
	for i := range ds {
		if ds[i].Kind == DeliverBody {
			ds[i].Body, ds[i].Owned = slabs.Clone(ds[i].Body), true
		}
	}
}
