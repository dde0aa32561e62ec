package client

import (
	"context"

	"github.com/rsbd/rsbd/scope"
)

// Reader queues the events on its scope and sub-scopes that pass its
// filters until Read takes them. The queue is bounded (WithQueue); when it
// is full events are dropped by its DropPolicy and counted.
type Reader struct {
	r    *receiver
	life lifecycle
}

// ReaderStats counts what a Reader did.
type ReaderStats struct {
	// Queued counts events accepted into the queue.
	Queued uint64
	// Dropped counts events lost to a full queue.
	Dropped uint64
	// DroppedForBytes counts the events of Dropped that the queue's byte
	// bound dropped (WithQueueBytes) rather than its size.
	DroppedForBytes uint64
	// Pending is the number of events waiting now.
	Pending int
	// PendingBytes is what they weigh against the byte bound.
	PendingBytes int64
}

// NewReader creates a reader on sc (WithFilter, WithQueue, WithQueueBytes and
// WithoutConversion apply). It is announced before NewReader returns.
func (b *Bus) NewReader(sc scope.Scope, opts ...Option) (*Reader, error) {
	r, err := b.newReceiver(sc, KindReader, collect(opts))
	if err != nil {
		return nil, err
	}
	rd := &Reader{r: r}
	if err := rd.life.open(b, r, r.q.close); err != nil {
		return nil, err
	}
	return rd, nil
}

// ID returns the reader's participant id.
func (rd *Reader) ID() [16]byte { return rd.r.info.id }

// Scope returns the reader's scope.
func (rd *Reader) Scope() scope.Scope { return rd.r.info.scope }

// Read returns the oldest queued event, waiting for one until ctx ends.
// A deadline gives an error wrapping ErrTimeout (and
// context.DeadlineExceeded); after Close it is ErrClosed; when the
// connection to the bus is lost and the queue is empty, ErrDisconnected.
func (rd *Reader) Read(ctx context.Context) (*Event, error) {
	if rd.r.q.len() == 0 {
		// A handler the connection's reader runs itself may be reading:
		// the next event comes through the reader.
		rd.r.bus.handOnReading()
	}
	it, err := rd.r.q.pop(ctx, rd.r.bus.dead, rd.r.bus.deadError)
	if err != nil {
		return nil, err
	}
	return rd.r.event(it, false), nil
}

// Stats returns the reader's counters.
func (rd *Reader) Stats() ReaderStats {
	q := rd.r.q
	return ReaderStats{
		Queued: q.pushed.Load(), Dropped: q.dropped.Load(), DroppedForBytes: q.droppedBytes.Load(),
		Pending: q.len(), PendingBytes: q.weight(),
	}
}

// Close retires the reader; queued events are discarded and blocked Reads
// return ErrClosed. It is idempotent.
func (rd *Reader) Close() error {
	rd.life.close()
	return nil
}
