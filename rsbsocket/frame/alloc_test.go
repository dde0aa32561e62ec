package frame

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
)

// BufSize is the read buffer of a client, or of a busy server connection,
// that the tests read frames through (exported for package frame_test).
const BufSize = 64 << 10

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadFrameLargeAllocation: the common large frame, a 1 MiB payload
// in its Notification, costs a quarter more than itself (it cost twice
// itself plus a full copy); a peer that announces 64 MiB and sends only
// part makes the reader allocate at most 1 MiB plus four times that part.
func TestReadFrameLargeAllocation(t *testing.T) {
	const slack = 32 << 10 // error values and the like
	const n = 1<<20 + 100
	src := bytes.NewReader(AppendFrame(nil, bytes.Repeat([]byte{7}, n)))
	r := bufio.NewReaderSize(src, BufSize)
	var body []byte
	var err error
	if got := allocated(func() { body, err = ReadFrame(r, 0, nil) }); err != nil || len(body) != n {
		t.Fatalf("ReadFrame = %d bytes, %v", len(body), err)
	} else if want := uint64(n + n/4 + slack); got > want {
		t.Fatalf("reading %d bytes allocated %d, want at most %d", n, got, want)
	}

	for _, sent := range []int{0, 100 << 10, 3 << 20} {
		stream := append(binary.LittleEndian.AppendUint32(nil, 64<<20), make([]byte, sent)...)
		src.Reset(stream)
		r.Reset(src)
		got := allocated(func() { body, err = ReadFrame(r, 0, nil) })
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("%d of 64 MiB sent: %v", sent, err)
		}
		if want := uint64(EagerAllocMax + growFactor*sent + slack); got > want {
			t.Errorf("%d of 64 MiB sent: %d bytes allocated, want at most %d", sent, got, want)
		}
	}
}

// TestReadLargeEagerBudget: a server reader allocates a large body whole
// from its header while the budget has room, so a 1 MiB payload in its
// Notification costs itself alone; it gives the room back however the read
// ends; with the budget taken (peers that announced large frames and
// stall), bodies are grown as ReadFrame grows them.
func TestReadLargeEagerBudget(t *testing.T) {
	const slack = 32 << 10
	const n = 1<<20 + 100
	frame := AppendFrame(nil, bytes.Repeat([]byte{7}, n))
	src := bytes.NewReader(frame)
	r := bufio.NewReaderSize(src, BufSize)
	var eager LargeBudget
	var body []byte
	var err error
	if got := allocated(func() { body, _, err = ReadFrameRoom(r, 0, Room{}, &eager) }); err != nil || len(body) != n {
		t.Fatalf("read %d bytes, %v", len(body), err)
	} else if got > n+slack {
		t.Fatalf("reading %d bytes allocated %d, want at most %d", n, got, n+slack)
	}
	if v := eager.inUse.Load(); v != 0 {
		t.Fatalf("budget holds %d bytes after the read", v)
	}

	// A peer that stops within the body: the room comes back with the error.
	src.Reset(frame[:n/2])
	r.Reset(src)
	if _, _, err = ReadFrameRoom(r, 0, Room{}, &eager); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut frame: %v", err)
	}
	if v := eager.inUse.Load(); v != 0 {
		t.Fatalf("budget holds %d bytes after a failed read", v)
	}

	// Budget taken: the body grows, and the budget is left as it was.
	eager.inUse.Store(EagerBudget - n + 1)
	src.Reset(frame)
	r.Reset(src)
	if got := allocated(func() { body, _, err = ReadFrameRoom(r, 0, Room{}, &eager) }); err != nil || !bytes.Equal(body, frame[HeaderSize:]) {
		t.Fatalf("read %d bytes, %v", len(body), err)
	} else if got < n+n/4 {
		t.Fatalf("reading %d bytes past the budget allocated %d, want the growing steps", n, got)
	}
	if v := eager.inUse.Load(); v != EagerBudget-n+1 {
		t.Fatalf("budget %d after a grown read, want %d", v, EagerBudget-n+1)
	}
	if r := eager.refused.Load(); r != 1 {
		t.Fatalf("%d refusals counted, want 1", r)
	}

	// Above eagerWholeMax a body always grows, budget or not.
	eager.inUse.Store(0)
	big := AppendFrame(nil, make([]byte, eagerWholeMax+1))
	src.Reset(big)
	r.Reset(src)
	if got := allocated(func() { body, _, err = ReadFrameRoom(r, 0, Room{}, &eager) }); err != nil || len(body) != eagerWholeMax+1 {
		t.Fatalf("read %d bytes, %v", len(body), err)
	} else if got < eagerWholeMax+eagerWholeMax/4 {
		t.Fatalf("reading %d bytes allocated %d, want the growing steps", eagerWholeMax+1, got)
	}
}
