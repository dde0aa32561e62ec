package engine

import (
	"slices"

	"github.com/rsbd/rsbd/transport/datagram"
)

// Accessors for the node's metrics and for tests that run whole nodes.

// QueueState is what waits for the engine.
type QueueState struct {
	// PublishesPending counts publishes submitted and not yet handled:
	// waiting for room, queued, or taken.
	PublishesPending int64
	// PublishesQueued counts the requests in the publish queue.
	PublishesQueued int
	// PublishWaiting says a publisher waits for room in the queue.
	PublishWaiting bool
	// ReceivesPending counts received batches queued and not yet handled;
	// ReceiveBytes their datagrams' bytes.
	ReceivesPending, ReceiveBytes int64
	// ReceivesQueued counts the batches in the receive queue, not yet
	// taken by the engine goroutine.
	ReceivesQueued int
}

// Queues returns what waits for the engine. It takes no engine lock.
func (e *Engine) Queues() QueueState {
	s := QueueState{
		PublishesPending: max(e.pubsPending.Load(), 0),
		ReceivesPending:  e.rxPending.Load(),
		ReceiveBytes:     e.rxBytes.Load(),
		ReceivesQueued:   len(e.rxCh),
	}
	e.pubs.mu.Lock()
	s.PublishesQueued, s.PublishWaiting = len(e.pubs.items), e.pubs.room != nil
	e.pubs.mu.Unlock()
	return s
}

// Window returns the flow-control window in datagrams.
func (e *Engine) Window() uint64 { return e.window }

// Blocked reports whether some reliable sender stream is over its window
// (publishes wait for ACKs).
func (e *Engine) Blocked() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.blocked) > 0
}

// BufferState is how the engine holds the pooled buffers of sent records.
type BufferState struct {
	// Recycled counts buffers the engine returned to their pool.
	Recycled uint64
	// Tracked counts sent datagrams whose buffers the engine tracks.
	Tracked int
	// Retained counts the datagrams the sender streams keep for repair.
	Retained int
}

// Buffers returns how the engine holds the buffers of sent records now.
func (e *Engine) Buffers() BufferState {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := BufferState{Recycled: e.frags.recycled, Tracked: len(e.frags.m)}
	for _, st := range e.senders {
		s.Retained += st.s.Retained()
	}
	return s
}

// Hold stops the engine until the returned release is called: its
// goroutine and the direct paths wait (publishes and received batches
// queue up). For tests of the queues' bounds; release must be called once.
func (e *Engine) Hold() (release func()) {
	e.holding.Store(true)
	e.mu.Lock()
	return func() {
		e.holding.Store(false)
		e.mu.Unlock()
	}
}

// StreamCounts is how many streams the engine keeps state for.
type StreamCounts struct {
	// Send counts this node's sender streams; Receive the peers' streams
	// it receives (freed on idle or when their sender leaves).
	Send, Receive int
}

// Streams returns the engine's stream counts. It never waits for the
// engine: while another holds the engine's lock it returns the counts it
// read last, so that a metrics scrape cannot stall behind a busy engine.
func (e *Engine) Streams() StreamCounts {
	if !e.mu.TryLock() {
		if c := e.lastStreams.Load(); c != nil {
			return *c
		}
		return StreamCounts{}
	}
	c := StreamCounts{Send: len(e.senders), Receive: e.rcv.Len()}
	e.mu.Unlock()
	e.lastStreams.Store(&c)
	return c
}

// SendGroups appends to dst the groups this node's sender streams send on,
// each once, in no order. A stream lives until it is evicted or idle, so
// a group stays listed for a while after its last event.
func (e *Engine) SendGroups(dst []datagram.GroupID) []datagram.GroupID {
	e.mu.Lock()
	defer e.mu.Unlock()
	start := len(dst)
	for k := range e.senders {
		if !slices.Contains(dst[start:], k.Group) {
			dst = append(dst, k.Group)
		}
	}
	return dst
}
