package grpcbus

// recvWindow is the receiving side of a stream's flow control: which
// Message frames the peer may send, and when and by how much the reader
// grants more. Credits are counted in messages, as the draft's
// WindowUpdate counts them, but the receiver chooses its increments: it
// keeps as many credits outstanding as its window, and the window grows
// while the reader keeps up and the messages are small, up to a message
// cap, and shrinks to what a byte budget allows at the recent message
// size. A slow reader stops the growth, so what it holds stays at the
// window it had; large messages shrink it at once. recvWindow does no
// I/O and takes no lock: its owner serialises the calls.
type recvWindow struct {
	limit  uint64 // messages the peer may send in all: the initial window and every grant
	grants uint64 // cumulative credits granted by WindowUpdates
	read   uint64 // messages the reader took
	win    int    // credits the reader keeps outstanding at most
	cap    int    // the largest win may grow to
	budget int    // bytes the outstanding credits may stand for
	size   int    // decaying maximum of recent message costs, in bytes
	kept   bool   // the reader found nothing waiting since the last grant
}

// newRecvWindow returns the window of a stream that granted initial
// credits at its handshake, may grow to maxMsgs and keeps budget bytes.
func newRecvWindow(initial, maxMsgs, budget int) recvWindow {
	initial = max(initial, 1)
	return recvWindow{limit: uint64(initial), win: initial, cap: max(initial, maxMsgs), budget: max(budget, 1)}
}

// admits reports whether the peer may send the Message numbered seq: a
// peer sending past it ignored the window.
func (w *recvWindow) admits(seq uint64) bool {
	return seq <= w.limit
}

// starved notes that the reader found no message waiting: it keeps up, so
// the window may grow at the next grant.
func (w *recvWindow) starved() {
	w.kept = true
}

// take counts a message of n payload bytes the reader took. It returns
// the credits to grant now and the cumulative grant the WindowUpdate
// carries, or a zero delta when no update is due: one is due once the
// outstanding credits fell by half the window.
func (w *recvWindow) take(n int) (delta uint32, cum uint64) {
	w.read++
	w.size = max(n+queuedOverhead, w.size-w.size/sizeDecay)
	out := 0
	if w.limit > w.read {
		out = int(w.limit - w.read)
	}
	t := w.target()
	if t-out < max(1, t/2) {
		return 0, 0
	}
	if w.kept && w.win < w.cap && w.budget/w.size > w.win {
		w.win = min(2*w.win, w.cap)
		t = w.target()
	}
	w.kept = false
	d := t - out
	w.limit += uint64(d)
	w.grants += uint64(d)
	return uint32(d), w.grants
}

// target returns the credits to keep outstanding: the window, as far as
// the byte budget allows at the recent message size, and at least one.
func (w *recvWindow) target() int {
	t := w.win
	if w.size > 0 {
		t = min(t, w.budget/w.size)
	}
	return max(t, 1)
}

// outstanding returns the credits granted and not yet used by a message
// the reader took: what may be queued or on its way.
func (w *recvWindow) outstanding() int {
	if w.limit <= w.read {
		return 0
	}
	return int(w.limit - w.read)
}
