package rsbsocket

import "testing"

func TestSendQueueBounds(t *testing.T) {
	q := newSendQueue(3, 10)
	big := make([]byte, 25)
	if q.push(big) != pushOK {
		t.Fatal("empty queue refused a frame above the byte bound")
	}
	if q.push([]byte{1}) != pushFull {
		t.Fatal("byte bound not enforced")
	}
	batch, closed, _ := q.take(nil)
	if len(batch) != 1 || closed {
		t.Fatalf("take = %d frames, closed %v", len(batch), closed)
	}
	if q.push([]byte{1}) != pushFull {
		t.Fatal("frames being written must count against the bound")
	}
	q.release(1, 25)
	for i := range 3 {
		if q.push([]byte{byte(i)}) != pushOK {
			t.Fatalf("push %d refused", i)
		}
	}
	if q.push([]byte{9}) != pushFull {
		t.Fatal("frame bound not enforced")
	}
	if f, b, _ := q.depth(); f != 3 || b != 3 {
		t.Fatalf("depth = %d, %d", f, b)
	}
}

func TestSendQueueClose(t *testing.T) {
	q := newSendQueue(10, 100)
	q.push([]byte("ab"))
	if n, _ := q.close(true); n != 0 {
		t.Fatal("flushing close discarded frames")
	}
	if q.push([]byte("c")) != pushClosed {
		t.Fatal("closed queue accepted a frame")
	}
	batch, closed, flush := q.take(nil)
	if len(batch) != 1 || !closed || !flush {
		t.Fatalf("take = %d frames, closed %v, flush %v", len(batch), closed, flush)
	}
	q.release(1, 2)

	q = newSendQueue(10, 100)
	q.push([]byte("ab"))
	q.push([]byte("cde"))
	q.close(true)
	if n, b := q.close(false); n != 2 || b != 5 {
		t.Fatalf("abort after flush discarded %d frames, %d bytes", n, b)
	}
	if batch, closed, flush := q.take(nil); len(batch) != 0 || !closed || flush {
		t.Fatalf("take after abort = %d frames, closed %v, flush %v", len(batch), closed, flush)
	}
	if f, b, _ := q.depth(); f != 0 || b != 0 {
		t.Fatalf("depth after abort = %d, %d", f, b)
	}
	select {
	case <-q.wake:
	default:
		t.Fatal("close did not wake the writer")
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
	q := newSendQueue(8, 1000) // high watermark 6 frames, 750 bytes; low 4, 500
	if q.push(make([]byte, 700)) != pushOK {
		t.Fatal("push refused")
	}
	if res, _ := q.offer(make([]byte, 100)); res != pushOK {
		t.Fatalf("offer below the watermark = %v", res)
	}
	res, room := q.offer(make([]byte, 10))
	if res != pushWait || room == nil || isClosed(room) {
		t.Fatalf("offer above the watermark = %v", res)
	}
	if q.push(make([]byte, 150)) != pushOK {
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
	q.push(make([]byte, 100))
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
	if _, _, stalled := q.depth(); !stalled {
		t.Fatal("stall ended above the low watermark")
	}
	q.release(1, 120) // 500 bytes
	if _, _, stalled := q.depth(); stalled {
		t.Fatal("stall did not end at the low watermark")
	}

	q.push(make([]byte, 300))
	_, room = q.offer(make([]byte, 10))
	q.close(true)
	if !isClosed(room) {
		t.Fatal("close did not end the wait")
	}
	if res, _ := q.offer(make([]byte, 10)); res != pushClosed {
		t.Fatalf("offer after close = %v", res)
	}
}
