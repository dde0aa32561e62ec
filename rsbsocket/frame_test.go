package rsbsocket

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"slices"
	"testing"
	"testing/iotest"
)

func TestAppendReadFrameRoundTrip(t *testing.T) {
	sizes := []int{1, 80, readBufferSize - 1, readBufferSize + 1, eagerAllocMax, eagerAllocMax + 1, 3*eagerAllocMax + 7, 17*eagerAllocMax + 3}
	var stream []byte
	for i, n := range sizes {
		stream = AppendFrame(stream, bytes.Repeat([]byte{byte(i + 1)}, n))
	}
	r := bufio.NewReaderSize(bytes.NewReader(stream), readBufferSize)
	for i, n := range sizes {
		body, err := ReadFrame(r, 0, nil)
		if err != nil {
			t.Fatalf("frame %d (%d bytes): %v", i, n, err)
		}
		if !bytes.Equal(body, bytes.Repeat([]byte{byte(i + 1)}, n)) {
			t.Fatalf("frame %d: body differs (len %d, want %d)", i, len(body), n)
		}
	}
	if _, err := ReadFrame(r, 0, nil); err != io.EOF {
		t.Fatalf("after last frame: %v, want io.EOF", err)
	}
}

func TestAppendFrameHeader(t *testing.T) {
	got := AppendFrame([]byte{0xff}, pythonFrame)
	if !bytes.Equal(got[:5], []byte{0xff, 0x50, 0, 0, 0}) || !bytes.Equal(got[5:], pythonFrame) {
		t.Fatalf("AppendFrame = % x", got[:8])
	}
}

func TestReadFrameReusesBuffer(t *testing.T) {
	buf := make([]byte, 0, 128)
	r := bufio.NewReader(bytes.NewReader(AppendFrame(nil, pythonFrame)))
	body, err := ReadFrame(r, 0, buf)
	if err != nil {
		t.Fatal(err)
	}
	if &body[0] != &buf[:1][0] {
		t.Fatal("body not read into buf")
	}
}

// TestReadFrameSized: a body that does not fit in buf goes into what get
// gives for its length when that is large enough, else into new memory; a
// body that fits asks nothing; a frame too large asks nothing either.
func TestReadFrameSized(t *testing.T) {
	mine := make([]byte, 0, 3*eagerAllocMax)
	var asked []int
	get := func(n int) []byte {
		asked = append(asked, n)
		if n > 2*eagerAllocMax {
			return make([]byte, 0, 8) // too small: ignored
		}
		return mine
	}
	sizes := []int{10, 500, 2 * eagerAllocMax, 2*eagerAllocMax + 1}
	var stream []byte
	for i, n := range sizes {
		stream = AppendFrame(stream, bytes.Repeat([]byte{byte(i + 1)}, n))
	}
	stream = AppendFrame(stream, make([]byte, 100)) // above the limit below
	r := bufio.NewReader(bytes.NewReader(stream))
	small := make([]byte, 0, 64)
	for i, n := range sizes {
		body, err := ReadFrameSized(r, 3*eagerAllocMax, small, get)
		if err != nil || !bytes.Equal(body, bytes.Repeat([]byte{byte(i + 1)}, n)) {
			t.Fatalf("frame %d (%d bytes): len %d, %v", i, n, len(body), err)
		}
		inMine := &body[0] == &mine[:1][0]
		if inMine != (i == 1 || i == 2) {
			t.Fatalf("frame %d (%d bytes): read into get's memory %v", i, n, inMine)
		}
	}
	if !slices.Equal(asked, sizes[1:]) {
		t.Fatalf("asked for %v, want %v", asked, sizes[1:])
	}
	asked = nil
	if _, err := ReadFrameSized(r, 50, nil, get); !errors.Is(err, ErrFrameTooLarge) || asked != nil {
		t.Fatalf("frame above the limit: %v, asked for %v", err, asked)
	}
}

func TestReadFrameErrors(t *testing.T) {
	header := func(n uint32) []byte { return binary.LittleEndian.AppendUint32(nil, n) }
	tests := []struct {
		name  string
		input []byte
		max   int
		want  error
	}{
		{"clean EOF", nil, 0, io.EOF},
		{"EOF in header", []byte{5, 0}, 0, io.ErrUnexpectedEOF},
		{"EOF in body", append(header(5), 1, 2), 0, io.ErrUnexpectedEOF},
		{"EOF in large body", append(header(10<<20), 1, 2, 3), 0, io.ErrUnexpectedEOF},
		{"empty frame", header(0), 0, ErrEmptyFrame},
		{"above max", header(1025), 1024, ErrFrameTooLarge},
		{"above default max", header(DefaultMaxFrameSize + 1), 0, ErrFrameTooLarge},
		{"4 GiB", header(0xffffffff), 0, ErrFrameTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReader(bytes.NewReader(tt.input))
			body, err := ReadFrame(r, tt.max, nil)
			if !errors.Is(err, tt.want) || body != nil {
				t.Fatalf("ReadFrame = %d bytes, %v; want %v", len(body), err, tt.want)
			}
		})
	}
}

func TestReadFrameEmptyKeepsSync(t *testing.T) {
	stream := append([]byte{0, 0, 0, 0}, AppendFrame(nil, pythonFrame)...)
	r := bufio.NewReader(bytes.NewReader(stream))
	if _, err := ReadFrame(r, 0, nil); !errors.Is(err, ErrEmptyFrame) {
		t.Fatalf("first: %v, want ErrEmptyFrame", err)
	}
	body, err := ReadFrame(r, 0, nil)
	if err != nil || !bytes.Equal(body, pythonFrame) {
		t.Fatalf("second: %v", err)
	}
}

func TestReadFrameTooLargeAllocatesNothing(t *testing.T) {
	input := binary.LittleEndian.AppendUint32(nil, 1<<30)
	src := bytes.NewReader(input)
	r := bufio.NewReader(src)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		src.Reset(input)
		r.Reset(src)
		if _, err := ReadFrame(r, 1<<20, nil); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// Only the error values are allocated, never a body.
	if got := after.TotalAlloc - before.TotalAlloc; got > 100<<10 {
		t.Fatalf("%d bytes allocated for 100 refused frames", got)
	}
}

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
	r := bufio.NewReaderSize(src, readBufferSize)
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
		if want := uint64(eagerAllocMax + growFactor*sent + slack); got > want {
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
	r := bufio.NewReaderSize(src, readBufferSize)
	var eager largeBudget
	var body []byte
	var err error
	if got := allocated(func() { body, _, err = readFrameRoom(r, 0, Room{}, &eager) }); err != nil || len(body) != n {
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
	if _, _, err = readFrameRoom(r, 0, Room{}, &eager); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut frame: %v", err)
	}
	if v := eager.inUse.Load(); v != 0 {
		t.Fatalf("budget holds %d bytes after a failed read", v)
	}

	// Budget taken: the body grows, and the budget is left as it was.
	eager.inUse.Store(eagerBudget - n + 1)
	src.Reset(frame)
	r.Reset(src)
	if got := allocated(func() { body, _, err = readFrameRoom(r, 0, Room{}, &eager) }); err != nil || !bytes.Equal(body, frame[headerSize:]) {
		t.Fatalf("read %d bytes, %v", len(body), err)
	} else if got < n+n/4 {
		t.Fatalf("reading %d bytes past the budget allocated %d, want the growing steps", n, got)
	}
	if v := eager.inUse.Load(); v != eagerBudget-n+1 {
		t.Fatalf("budget %d after a grown read, want %d", v, eagerBudget-n+1)
	}
	if r := eager.refused.Load(); r != 1 {
		t.Fatalf("%d refusals counted, want 1", r)
	}

	// Above eagerWholeMax a body always grows, budget or not.
	eager.inUse.Store(0)
	big := AppendFrame(nil, make([]byte, eagerWholeMax+1))
	src.Reset(big)
	r.Reset(src)
	if got := allocated(func() { body, _, err = readFrameRoom(r, 0, Room{}, &eager) }); err != nil || len(body) != eagerWholeMax+1 {
		t.Fatalf("read %d bytes, %v", len(body), err)
	} else if got < eagerWholeMax+eagerWholeMax/4 {
		t.Fatalf("reading %d bytes allocated %d, want the growing steps", eagerWholeMax+1, got)
	}
}

func TestHandshake(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHandshake(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), []byte{0, 0, 0, 0}) {
		t.Fatalf("handshake = % x, want 00 00 00 00", b.Bytes())
	}
	tests := []struct {
		input []byte
		ok    bool
	}{
		{[]byte{0, 0, 0, 0}, true},
		{[]byte{0, 0, 0, 0, 0}, true}, // the fifth byte is not read
		{[]byte{0, 0, 0, 1}, false},
		{[]byte{0, 0, 0}, false},
		{nil, false},
	}
	for _, tt := range tests {
		r := bytes.NewReader(tt.input)
		err := ReadHandshake(r)
		if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrBadHandshake)) {
			t.Errorf("ReadHandshake(% x) = %v", tt.input, err)
		}
		if tt.ok && r.Len() != len(tt.input)-4 {
			t.Errorf("ReadHandshake(% x) consumed %d bytes", tt.input, len(tt.input)-r.Len())
		}
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add(AppendFrame(nil, pythonFrame))
	f.Add(AppendFrame(AppendFrame(nil, []byte("a")), []byte("bc")))
	f.Add([]byte{0, 0, 0, 0, 1, 0, 0, 0, 'x'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{100, 0, 0, 0, 1, 2, 3})
	f.Add([]byte{3, 0})
	const maxSize = 200
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReaderSize(bytes.NewReader(data), 16)
		var rebuilt []byte
		// Every other frame is read with ReadFrameSized: into a small
		// buffer of its own when it fits, else into what get answers, in
		// turn nothing, too little, just enough and more.
		small := make([]byte, 0, 4)
		asked := 0
		get := func(n int) []byte {
			asked++
			switch asked % 4 {
			case 1:
				return make([]byte, 0, n-1)
			case 2:
				return make([]byte, 0, n)
			case 3:
				return make([]byte, 5, n+3)
			}
			return nil
		}
		for frame := 0; ; frame++ {
			var body []byte
			var err error
			if frame%2 == 0 {
				body, err = ReadFrame(r, maxSize, nil)
			} else {
				body, err = ReadFrameSized(r, maxSize, small, get)
			}
			if err != nil {
				if errors.Is(err, ErrEmptyFrame) {
					rebuilt = append(rebuilt, 0, 0, 0, 0)
					continue
				}
				if errors.Is(err, ErrFrameTooLarge) {
					if n := binary.LittleEndian.Uint32(data[len(rebuilt):]); n <= maxSize {
						t.Fatalf("refused a frame of %d bytes", n)
					}
				}
				if err == io.EOF && len(rebuilt) != len(data) {
					t.Fatalf("io.EOF after %d of %d bytes", len(rebuilt), len(data))
				}
				return
			}
			if len(body) == 0 || len(body) > maxSize {
				t.Fatalf("body of %d bytes", len(body))
			}
			rebuilt = AppendFrame(rebuilt, body)
			if !bytes.HasPrefix(data, rebuilt) {
				t.Fatal("frames do not re-encode to the input")
			}
		}
	})
}

// framewiseReader returns one frame, or what its Read asks of it, per Read.
type framewiseReader struct{ frames [][]byte }

func (f *framewiseReader) Read(p []byte) (int, error) {
	if len(f.frames) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.frames[0])
	if f.frames[0] = f.frames[0][n:]; len(f.frames[0]) == 0 {
		f.frames = f.frames[1:]
	}
	return n, nil
}

// TestConnReaderGrows: a connection's reader starts with a small buffer,
// moves to a large one after readUpgradeBytes of small frames, whether the
// small buffer is empty then or not, and loses no byte on the way.
func TestConnReaderGrows(t *testing.T) {
	var bodies, frames [][]byte
	for i, small := 0, 0; small < 2*readUpgradeBytes; i++ {
		body := bytes.Repeat([]byte{byte(i)}, 90+i%50)
		if i%100 == 7 {
			body = bytes.Repeat([]byte{byte(i)}, readBufferSize) // large: not counted
		} else {
			small += headerSize + len(body)
		}
		bodies = append(bodies, body)
		frames = append(frames, AppendFrame(nil, body))
	}
	sources := map[string]func() io.Reader{
		"stream":      func() io.Reader { return bytes.NewReader(bytes.Join(frames, nil)) },
		"frame-wise":  func() io.Reader { return &framewiseReader{frames: slices.Clone(frames)} },
		"odd-chunked": func() io.Reader { return iotest.HalfReader(bytes.NewReader(bytes.Join(frames, nil))) },
	}
	for name, source := range sources {
		t.Run(name, func(t *testing.T) {
			src := source()
			cr := connReader{src: src, r: bufio.NewReaderSize(src, readBufferMin)}
			rm := Room{Head: 6, Tail: 4}
			for i, want := range bodies {
				got, room, err := cr.next(0, rm)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("frame %d: %d bytes, %v", i, len(got), err)
				}
				if len(room) != rm.Head+len(want)+rm.Tail || !bytes.Equal(room[rm.Head:rm.Head+len(want)], want) || cap(got) != len(got) {
					t.Fatalf("frame %d: room of %d bytes around a body of %d (cap %d)", i, len(room), len(want), cap(got))
				}
			}
			if _, _, err := cr.next(0, rm); err != io.EOF {
				t.Fatalf("after the last frame: %v", err)
			}
			if cr.small >= 0 || cr.r.Size() != readBufferSize {
				t.Fatalf("reader did not grow: small %d, size %d", cr.small, cr.r.Size())
			}
		})
	}
}
