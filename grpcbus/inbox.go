package grpcbus

import "sync"

// inbox holds a stream's received frames for its reader, in order, with
// the receiving side of the stream's flow control. The delivering
// goroutine puts, the reader takes; Messages are bounded by the window
// the reader granted, other frames by controlSlack.
type inbox struct {
	mu      sync.Mutex
	frames  []inFrame // frames[head:] wait for the reader
	head    int
	ctrl    int // frames other than Messages waiting
	bytes   int // payload bytes of the Messages waiting
	win     recvWindow
	waiting bool          // the reader waits on ready
	ready   chan struct{} // signalled when a frame arrives for a waiting reader
}

func newInbox(win recvWindow) *inbox {
	return &inbox{win: win, ready: make(chan struct{}, 1)}
}

// putMessage queues a Message numbered seq; false means the peer sent
// past its window.
func (b *inbox) putMessage(in inFrame, seq uint64) bool {
	b.mu.Lock()
	if !b.win.admits(seq) {
		b.mu.Unlock()
		return false
	}
	b.bytes += len(in.payload)
	b.append(in)
	return true
}

// putControl queues a frame other than a Message; false means the peer
// sent more of them than a stream has.
func (b *inbox) putControl(in inFrame) bool {
	b.mu.Lock()
	if b.ctrl >= controlSlack {
		b.mu.Unlock()
		return false
	}
	b.ctrl++
	b.append(in)
	return true
}

// preload queues the request message of a call whose client does not
// stream, which came with the handshake and took no credit.
func (b *inbox) preload(in inFrame) {
	b.mu.Lock()
	b.bytes += len(in.payload)
	b.append(in)
}

// append adds in and wakes a waiting reader; it releases mu. A full slice
// whose front half was taken is compacted instead of grown.
func (b *inbox) append(in inFrame) {
	if len(b.frames) == cap(b.frames) && b.head > 0 && 2*b.head >= len(b.frames) {
		n := copy(b.frames, b.frames[b.head:])
		clear(b.frames[n:])
		b.frames, b.head = b.frames[:n], 0
	}
	b.frames = append(b.frames, in)
	wake := b.waiting
	b.waiting = false
	b.mu.Unlock()
	if wake {
		signal(b.ready)
	}
}

// take returns the next frame and, for a Message, the WindowUpdate due
// (a zero delta when none is); ok is false when nothing waits, and the
// reader is then marked waiting on ready.
func (b *inbox) take() (in inFrame, delta uint32, cum uint64, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.head == len(b.frames) {
		b.win.starved()
		b.waiting = true
		return inFrame{}, 0, 0, false
	}
	in = b.frames[b.head]
	b.frames[b.head] = inFrame{}
	b.head++
	if b.head == len(b.frames) {
		b.reset()
	}
	if in.fr != nil {
		b.ctrl--
		return in, 0, 0, true
	}
	b.bytes -= len(in.payload)
	delta, cum = b.win.take(len(in.payload))
	return in, delta, cum, true
}

// reset empties the drained slice, keeping it unless a burst grew it
// past inboxKeepCap.
func (b *inbox) reset() {
	if cap(b.frames) > inboxKeepCap {
		b.frames, b.head = nil, 0
		return
	}
	b.frames, b.head = b.frames[:0], 0
}

// held returns the Messages and their payload bytes waiting, and the
// window's outstanding credits.
func (b *inbox) held() (msgs, bytes, outstanding int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.frames) - b.head - b.ctrl, b.bytes, b.win.outstanding()
}
