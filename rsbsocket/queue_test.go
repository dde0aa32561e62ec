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
	if f, b := q.depth(); f != 3 || b != 3 {
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
	if f, b := q.depth(); f != 0 || b != 0 {
		t.Fatalf("depth after abort = %d, %d", f, b)
	}
	select {
	case <-q.wake:
	default:
		t.Fatal("close did not wake the writer")
	}
}
