package qos

// The Receivers table keeps its streams on two intrusive structures: a list
// ordered by last DATA (for idle expiry and eviction) and a min-heap of
// receiver deadlines (so that one timer serves them all).

// linkNewest puts st at the newest end of the idle list.
func (t *Receivers) linkNewest(st *stream) {
	st.older, st.newer = t.newest, nil
	if t.newest != nil {
		t.newest.newer = st
	}
	t.newest = st
	if t.oldest == nil {
		t.oldest = st
	}
}

// unlink takes st off the idle list.
func (t *Receivers) unlink(st *stream) {
	if st.newer != nil {
		st.newer.older = st.older
	} else {
		t.newest = st.older
	}
	if st.older != nil {
		st.older.newer = st.newer
	} else {
		t.oldest = st.newer
	}
	st.newer, st.older = nil, nil
}

// touch moves st to the newest end of the idle list (it just had DATA).
func (t *Receivers) touch(st *stream) {
	if t.newest != st {
		t.unlink(st)
		t.linkNewest(st)
	}
}

// timerHeap is a min-heap of streams by deadline; each stream knows its index.
type timerHeap []*stream

func (h *timerHeap) push(st *stream) {
	st.idx = len(*h)
	*h = append(*h, st)
	h.up(st.idx)
}

// remove takes the stream at index i off the heap.
func (h *timerHeap) remove(i int) {
	s := *h
	last := len(s) - 1
	s[i].idx = -1
	if i != last {
		s[i] = s[last]
		s[i].idx = i
	}
	s[last] = nil
	*h = s[:last]
	if i != last {
		h.fix(i)
	}
}

// fix restores the heap after the deadline at index i changed.
func (h *timerHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h timerHeap) less(i, j int) bool { return h[i].at.Before(h[j].at) }

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}

func (h timerHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down sifts index i down and reports whether it moved.
func (h timerHeap) down(i int) bool {
	start := i
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if r := c + 1; r < len(h) && h.less(r, c) {
			c = r
		}
		if !h.less(c, i) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > start
}
