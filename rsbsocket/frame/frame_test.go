package frame_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"slices"
	"testing"

	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
)

func TestAppendReadFrameRoundTrip(t *testing.T) {
	sizes := []int{1, 80, frame.BufSize - 1, frame.BufSize + 1, frame.EagerAllocMax, frame.EagerAllocMax + 1, 3*frame.EagerAllocMax + 7, 17*frame.EagerAllocMax + 3}
	var stream []byte
	for i, n := range sizes {
		stream = frame.AppendFrame(stream, bytes.Repeat([]byte{byte(i + 1)}, n))
	}
	r := bufio.NewReaderSize(bytes.NewReader(stream), frame.BufSize)
	for i, n := range sizes {
		body, err := frame.ReadFrame(r, 0, nil)
		if err != nil {
			t.Fatalf("frame %d (%d bytes): %v", i, n, err)
		}
		if !bytes.Equal(body, bytes.Repeat([]byte{byte(i + 1)}, n)) {
			t.Fatalf("frame %d: body differs (len %d, want %d)", i, len(body), n)
		}
	}
	if _, err := frame.ReadFrame(r, 0, nil); err != io.EOF {
		t.Fatalf("after last frame: %v, want io.EOF", err)
	}
}

func TestAppendFrameHeader(t *testing.T) {
	got := frame.AppendFrame([]byte{0xff}, socktest.PythonFrame)
	if !bytes.Equal(got[:5], []byte{0xff, 0x50, 0, 0, 0}) || !bytes.Equal(got[5:], socktest.PythonFrame) {
		t.Fatalf("AppendFrame = % x", got[:8])
	}
}

func TestReadFrameReusesBuffer(t *testing.T) {
	buf := make([]byte, 0, 128)
	r := bufio.NewReader(bytes.NewReader(frame.AppendFrame(nil, socktest.PythonFrame)))
	body, err := frame.ReadFrame(r, 0, buf)
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
	mine := make([]byte, 0, 3*frame.EagerAllocMax)
	var asked []int
	get := func(n int) []byte {
		asked = append(asked, n)
		if n > 2*frame.EagerAllocMax {
			return make([]byte, 0, 8) // too small: ignored
		}
		return mine
	}
	sizes := []int{10, 500, 2 * frame.EagerAllocMax, 2*frame.EagerAllocMax + 1}
	var stream []byte
	for i, n := range sizes {
		stream = frame.AppendFrame(stream, bytes.Repeat([]byte{byte(i + 1)}, n))
	}
	stream = frame.AppendFrame(stream, make([]byte, 100)) // above the limit below
	r := bufio.NewReader(bytes.NewReader(stream))
	small := make([]byte, 0, 64)
	for i, n := range sizes {
		body, err := frame.ReadFrameSized(r, 3*frame.EagerAllocMax, small, get)
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
	if _, err := frame.ReadFrameSized(r, 50, nil, get); !errors.Is(err, frame.ErrFrameTooLarge) || asked != nil {
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
		{"empty frame", header(0), 0, frame.ErrEmptyFrame},
		{"above max", header(1025), 1024, frame.ErrFrameTooLarge},
		{"above default max", header(frame.DefaultMaxFrameSize + 1), 0, frame.ErrFrameTooLarge},
		{"4 GiB", header(0xffffffff), 0, frame.ErrFrameTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReader(bytes.NewReader(tt.input))
			body, err := frame.ReadFrame(r, tt.max, nil)
			if !errors.Is(err, tt.want) || body != nil {
				t.Fatalf("ReadFrame = %d bytes, %v; want %v", len(body), err, tt.want)
			}
		})
	}
}

func TestReadFrameEmptyKeepsSync(t *testing.T) {
	stream := append([]byte{0, 0, 0, 0}, frame.AppendFrame(nil, socktest.PythonFrame)...)
	r := bufio.NewReader(bytes.NewReader(stream))
	if _, err := frame.ReadFrame(r, 0, nil); !errors.Is(err, frame.ErrEmptyFrame) {
		t.Fatalf("first: %v, want ErrEmptyFrame", err)
	}
	body, err := frame.ReadFrame(r, 0, nil)
	if err != nil || !bytes.Equal(body, socktest.PythonFrame) {
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
		if _, err := frame.ReadFrame(r, 1<<20, nil); !errors.Is(err, frame.ErrFrameTooLarge) {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// Only the error values are allocated, never a body.
	if got := after.TotalAlloc - before.TotalAlloc; got > 100<<10 {
		t.Fatalf("%d bytes allocated for 100 refused frames", got)
	}
}

func TestHandshake(t *testing.T) {
	var b bytes.Buffer
	if err := frame.WriteHandshake(&b); err != nil {
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
		err := frame.ReadHandshake(r)
		if tt.ok != (err == nil) || (err != nil && !errors.Is(err, frame.ErrBadHandshake)) {
			t.Errorf("ReadHandshake(% x) = %v", tt.input, err)
		}
		if tt.ok && r.Len() != len(tt.input)-4 {
			t.Errorf("ReadHandshake(% x) consumed %d bytes", tt.input, len(tt.input)-r.Len())
		}
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add(frame.AppendFrame(nil, socktest.PythonFrame))
	f.Add(frame.AppendFrame(frame.AppendFrame(nil, []byte("a")), []byte("bc")))
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
		for i := 0; ; i++ {
			var body []byte
			var err error
			if i%2 == 0 {
				body, err = frame.ReadFrame(r, maxSize, nil)
			} else {
				body, err = frame.ReadFrameSized(r, maxSize, small, get)
			}
			if err != nil {
				if errors.Is(err, frame.ErrEmptyFrame) {
					rebuilt = append(rebuilt, 0, 0, 0, 0)
					continue
				}
				if errors.Is(err, frame.ErrFrameTooLarge) {
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
			rebuilt = frame.AppendFrame(rebuilt, body)
			if !bytes.HasPrefix(data, rebuilt) {
				t.Fatal("frames do not re-encode to the input")
			}
		}
	})
}
