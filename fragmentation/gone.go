package fragmentation

// droppedIDs remembers the ids of the last events the Assembler dropped, so
// that their later fragments are refused instead of starting an event that
// cannot complete. It holds at most limit ids; the oldest goes first.
type droppedIDs struct {
	set   map[key]struct{}
	ring  []key // the ids in the order they came, up to limit
	next  int   // the ring slot replaced next once the ring is full
	limit int
}

// add remembers k.
func (d *droppedIDs) add(k key) {
	if _, ok := d.set[k]; ok {
		return
	}
	if d.set == nil {
		d.set = make(map[key]struct{})
	}
	if len(d.ring) < d.limit {
		d.ring = append(d.ring, k)
	} else {
		delete(d.set, d.ring[d.next])
		d.ring[d.next] = k
		d.next = (d.next + 1) % d.limit
	}
	d.set[k] = struct{}{}
}

// has reports whether k is remembered.
func (d *droppedIDs) has(k key) bool {
	if len(d.set) == 0 {
		return false
	}
	_, ok := d.set[k]
	return ok
}

// remembers reports whether a drop for r is remembered: every drop of an
// event, but not of a duplicate, a fragment without a usable id, or one
// that is itself refused for its dropped event.
func remembers(r Reason) bool {
	return r != ReasonDuplicate && r != ReasonDecode && r != ReasonBadEventID && r != ReasonAfterDrop
}
