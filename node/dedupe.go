package node

// recentEvents remembers the ids of the last events delivered from the
// network, to drop the second copy of an event that reaches the node through
// two groups. That can only happen while a narrowed-away scope lingers (the
// node then receives an old group and a new one), so the engine consults it
// only then. It is bounded: a ring of recentEventsSize ids and their set.
type recentEvents struct {
	ring [recentEventsSize]eventKey
	next int
	set  map[eventKey]struct{}
}

// eventKey is an RSB event id: sender participant and sequence number.
type eventKey struct {
	sender [16]byte
	seq    uint32
}

// seen records k and reports whether it was already there.
func (r *recentEvents) seen(k eventKey) bool {
	if r.set == nil {
		r.set = make(map[eventKey]struct{}, recentEventsSize)
	}
	if _, ok := r.set[k]; ok {
		return true
	}
	if len(r.set) == recentEventsSize {
		delete(r.set, r.ring[r.next])
	}
	r.ring[r.next] = k
	r.next = (r.next + 1) % recentEventsSize
	r.set[k] = struct{}{}
	return false
}
