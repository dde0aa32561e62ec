package sinks

// RecentEvents remembers the ids of the last events delivered from the
// network, to drop the second copy of an event that reaches the node through
// two groups. That can only happen while a narrowed-away scope lingers (the
// node then receives an old group and a new one), so the engine consults it
// only then. It is bounded: a ring of RecentEventsSize ids and their set.
type RecentEvents struct {
	ring [RecentEventsSize]EventKey
	next int
	set  map[EventKey]struct{}
}

// EventKey is an RSB event id: sender participant and sequence number.
type EventKey struct {
	Sender [16]byte
	Seq    uint32
}

// seen records k and reports whether it was already there.
func (r *RecentEvents) Seen(k EventKey) bool {
	if r.set == nil {
		r.set = make(map[EventKey]struct{}, RecentEventsSize)
	}
	if _, ok := r.set[k]; ok {
		return true
	}
	if len(r.set) == RecentEventsSize {
		delete(r.set, r.ring[r.next])
	}
	r.ring[r.next] = k
	r.next = (r.next + 1) % RecentEventsSize
	r.set[k] = struct{}{}
	return false
}
