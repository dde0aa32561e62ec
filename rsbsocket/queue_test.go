package rsbsocket

import (
	"sync/atomic"
	"testing"
)

func TestSendQueueBounds(t *testing.T) {
	q := newSendQueue(3, 10+3*FrameOverhead)
	big := make([]byte, 25+3*FrameOverhead)
	if pushRes(q.push(big)) != pushOK {
		t.Fatal("empty queue refused a frame above the byte bound")
	}
	if pushRes(q.push([]byte{1})) != pushFull {
		t.Fatal("byte bound not enforced")
	}
	batch, closed, _ := q.take(nil)
	if len(batch) != 1 || closed {
		t.Fatalf("take = %d frames, closed %v", len(batch), closed)
	}
	if pushRes(q.push([]byte{1})) != pushFull {
		t.Fatal("frames being written must count against the bound")
	}
	q.release(1, len(big))
	for i := range 3 {
		if pushRes(q.push([]byte{byte(i)})) != pushOK {
			t.Fatalf("push %d refused", i)
		}
	}
	if pushRes(q.push([]byte{9})) != pushFull {
		t.Fatal("frame bound not enforced")
	}
	if f, b, c, _ := q.depth(); f != 3 || b != 3 || c != 3+3*FrameOverhead {
		t.Fatalf("depth = %d, %d", f, b)
	}
}

func TestSendQueueClose(t *testing.T) {
	q := bareQueue(10, 100)
	pushRes(q.push([]byte("ab")))
	if n, _ := q.close(true); n != 0 {
		t.Fatal("flushing close discarded frames")
	}
	if pushRes(q.push([]byte("c"))) != pushClosed {
		t.Fatal("closed queue accepted a frame")
	}
	batch, closed, flush := q.take(nil)
	if len(batch) != 1 || !closed || !flush {
		t.Fatalf("take = %d frames, closed %v, flush %v", len(batch), closed, flush)
	}
	q.release(1, 2)

	q = bareQueue(10, 100)
	pushRes(q.push([]byte("ab")))
	pushRes(q.push([]byte("cde")))
	q.close(true)
	if n, b := q.close(false); n != 2 || b != 5 {
		t.Fatalf("abort after flush discarded %d frames, %d bytes", n, b)
	}
	if batch, closed, flush := q.take(nil); len(batch) != 0 || !closed || flush {
		t.Fatalf("take after abort = %d frames, closed %v, flush %v", len(batch), closed, flush)
	}
	if f, b, c, _ := q.depth(); f != 0 || b != 0 || c != 0 {
		t.Fatalf("depth after abort = %d, %d", f, b)
	}
}

// bareQueue is newSendQueue without the per-frame overhead, for tests of
// the queue's arithmetic in body bytes.
func bareQueue(maxFrames, maxBytes int) *sendQueue {
	q := newSendQueue(maxFrames, maxBytes)
	q.lim.overhead = 0
	return q
}

// pushRes drops push's start flag.
func pushRes(r pushResult, _ bool) pushResult { return r }

func TestSendQueueOwnership(t *testing.T) {
	q := bareQueue(10, 100)
	if q.claim() {
		t.Fatal("claimed an empty queue")
	}
	if r, start := q.push([]byte("a")); r != pushOK || !start {
		t.Fatalf("first push = %v, start %v; want the caller to own the queue", r, start)
	}
	if _, start := q.push([]byte("b")); start {
		t.Fatal("second push started a writer although the queue has an owner")
	}
	if q.claim() {
		t.Fatal("claimed an owned queue")
	}
	if done, final := q.letGo(); done || final {
		t.Fatal("owner let go with frames pending")
	}
	if got := q.takeInto(nil); len(got) != 2 {
		t.Fatalf("takeInto = %d frames, want 2", len(got))
	}
	q.release(2, 2)
	if done, _ := q.letGo(); !done {
		t.Fatal("owner could not let go of an empty queue")
	}
	// An offered frame waits for a flushing reader to claim it.
	if r, _ := q.offer([]byte("c")); r != pushOK {
		t.Fatalf("offer = %v", r)
	}
	if !q.claim() {
		t.Fatal("could not claim a queue with an offered frame")
	}
	// A flushing close while owned: the owner performs the final drain.
	q.close(true)
	if q.claimFinal() {
		t.Fatal("closer claimed the final drain from an owner")
	}
	idle := make(chan struct{})
	go func() { q.waitIdle(); close(idle) }()
	if done, final := q.letGo(); done || !final {
		t.Fatalf("letGo after flushing close = %v, %v; want the final drain", done, final)
	}
	if isClosed(idle) {
		t.Fatal("waitIdle returned while the final drain is owned")
	}
	q.endFinal()
	<-idle
	if q.claimFinal() {
		t.Fatal("final drain claimed twice")
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestSendQueueOfferWatermarks(t *testing.T) {
	q := bareQueue(8, 1000) // high watermark 6 frames, 750 bytes; low 4, 500
	if pushRes(q.push(make([]byte, 700))) != pushOK {
		t.Fatal("push refused")
	}
	if res, _ := q.offer(make([]byte, 100)); res != pushOK {
		t.Fatalf("offer below the watermark = %v", res)
	}
	res, room := q.offer(make([]byte, 10))
	if res != pushWait || room == nil || isClosed(room) {
		t.Fatalf("offer above the watermark = %v", res)
	}
	if pushRes(q.push(make([]byte, 150))) != pushOK {
		t.Fatal("push refused below the bounds")
	}
	q.release(0, 100) // part of a large frame written: 850 bytes left
	if isClosed(room) {
		t.Fatal("room signalled above the watermark")
	}
	q.release(1, 150) // 700 bytes
	if !isClosed(room) {
		t.Fatal("room not signalled below the watermark")
	}
	if res, _ := q.offer(make([]byte, 10)); res != pushOK {
		t.Fatalf("offer after room = %v", res)
	}

	// 810 bytes: a wait times out and the queue stalls.
	pushRes(q.push(make([]byte, 100)))
	if res, _ := q.offer(make([]byte, 10)); res != pushWait {
		t.Fatalf("offer = %v, want pushWait", res)
	}
	if res, newly := q.stall(make([]byte, 10)); res != pushStalled || !newly {
		t.Fatalf("stall = %v, %v", res, newly)
	}
	if res, newly := q.stall(make([]byte, 10)); res != pushStalled || newly {
		t.Fatalf("second stall = %v, %v", res, newly)
	}
	if res, room := q.offer(make([]byte, 10)); res != pushStalled || room != nil {
		t.Fatalf("offer to a stalled queue = %v", res)
	}
	q.release(1, 200) // 610 bytes: below the high watermark, still stalled
	if res, _ := q.offer(make([]byte, 10)); res != pushOK {
		t.Fatalf("offer below the watermark while stalled = %v", res)
	}
	if _, _, _, stalled := q.depth(); !stalled {
		t.Fatal("stall ended above the low watermark")
	}
	q.release(1, 120) // 500 bytes
	if _, _, _, stalled := q.depth(); stalled {
		t.Fatal("stall did not end at the low watermark")
	}

	pushRes(q.push(make([]byte, 300)))
	_, room = q.offer(make([]byte, 10))
	q.close(true)
	if !isClosed(room) {
		t.Fatal("close did not end the wait")
	}
	if res, _ := q.offer(make([]byte, 10)); res != pushClosed {
		t.Fatalf("offer after close = %v", res)
	}
}

// TestQueueHeavyCount: a queue counts itself heavy from its backlog floor
// (a quarter of its byte bound here, below the high watermark) or its
// frame watermark, and uncounts itself when it drains, is discarded or is
// detached.
func TestQueueHeavyCount(t *testing.T) {
	var heavy atomic.Int64
	q := bareQueue(8, 1000) // high watermark 6 frames, 750 bytes; floor 250 bytes
	q.heavy = &heavy
	q.push(make([]byte, 200))
	if heavy.Load() != 0 {
		t.Fatal("heavy below the floor")
	}
	q.push(make([]byte, 50))
	if heavy.Load() != 1 {
		t.Fatal("not heavy at the floor")
	}
	q.push(make([]byte, 10)) // already counted: counted once
	if heavy.Load() != 1 {
		t.Fatalf("counted %d times", heavy.Load())
	}
	q.release(2, 250)
	if heavy.Load() != 0 {
		t.Fatal("still heavy after draining")
	}
	for range 6 { // the frame watermark
		q.push(make([]byte, 1))
	}
	if heavy.Load() != 1 {
		t.Fatal("not heavy at the frame watermark")
	}
	q.close(false)
	if heavy.Load() != 0 {
		t.Fatal("still heavy after the queue was discarded")
	}
	q2 := newSendQueue(8, 1000)
	q2.heavy = &heavy
	q2.push(make([]byte, 500))
	q2.detach()
	if heavy.Load() != 0 || q2.heavy != nil {
		t.Fatal("still counted after detach")
	}
}

// TestQueueChargesOverhead: every frame counts FrameOverhead besides its
// body against the byte bound and the watermarks, so tiny frames reach
// the byte bound long before the frame bound.
func TestQueueChargesOverhead(t *testing.T) {
	q := newSendQueue(1000, 10*(FrameOverhead+1)) // room for 10 one-byte frames
	for i := range 10 {
		if pushRes(q.push([]byte{byte(i)})) != pushOK {
			t.Fatalf("push %d refused", i)
		}
	}
	if pushRes(q.push([]byte{1})) != pushFull {
		t.Fatal("byte bound not charged per frame")
	}
	if f, b, c, _ := q.depth(); f != 10 || b != 10 || c != 10*(FrameOverhead+1) {
		t.Fatalf("depth = %d frames, %d bytes, charge %d", f, b, c)
	}
	if res, _ := q.offer([]byte{1}); res != pushWait {
		t.Fatalf("offer above the charged high watermark = %v", res)
	}
	q.release(10, 10)
	if _, _, c, _ := q.depth(); c != 0 {
		t.Fatalf("charge %d after release", c)
	}
}

// TestSendQueueBlocks: a backlog longer than a block is taken a block at a
// time, oldest first, by take and takeInto alike; no frame is lost, none
// repeats, and an abort discards and counts every block.
func TestSendQueueBlocks(t *testing.T) {
	const n = 2*queueBlock + 5
	frame := func(i int) []byte { return []byte{byte(i), byte(i >> 8), byte(i >> 16)} }
	fill := func() *sendQueue {
		q := bareQueue(4*queueBlock, 1<<30)
		for i := range n {
			if pushRes(q.push(frame(i))) != pushOK {
				t.Fatalf("push %d refused", i)
			}
		}
		return q
	}
	q := fill()
	var got [][]byte
	var spare [][]byte
	for round := 0; ; round++ {
		var batch [][]byte
		if round%2 == 0 {
			batch, _, _ = q.take(spare)
		} else {
			batch = q.takeInto(nil)
		}
		if len(batch) == 0 {
			break
		}
		if len(batch) > queueBlock {
			t.Fatalf("take %d handed out %d frames, more than a block", round, len(batch))
		}
		got = append(got, batch...)
		q.release(len(batch), 3*len(batch))
		clear(batch)
		spare = batch[:0]
	}
	if len(got) != n {
		t.Fatalf("took %d frames, want %d", len(got), n)
	}
	for i, f := range got {
		if string(f) != string(frame(i)) {
			t.Fatalf("frame %d out of order: %v", i, f)
		}
	}
	if f, b, _, _ := q.depth(); f != 0 || b != 0 {
		t.Fatalf("depth after draining = %d frames, %d bytes", f, b)
	}

	q = fill()
	if frames, bytes := q.close(false); frames != n || bytes != 3*n {
		t.Fatalf("abort discarded %d frames, %d bytes; want %d, %d", frames, bytes, n, 3*n)
	}
	if f, b, _, _ := q.depth(); f != 0 || b != 0 {
		t.Fatalf("depth after the abort = %d frames, %d bytes", f, b)
	}
	if batch, closed, _ := q.take(nil); len(batch) != 0 || !closed {
		t.Fatalf("take after the abort = %d frames, closed %v", len(batch), closed)
	}
}
