package frame

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync/atomic"
)

// Errors callers branch on.
var (
	// ErrFrameTooLarge reports a frame whose announced length exceeds the
	// configured maximum. The body has not been read: the stream is out of
	// sync and the connection must be closed.
	ErrFrameTooLarge = errors.New("rsbsocket: frame too large")

	// ErrEmptyFrame reports a frame of length zero. An empty body cannot be
	// a Notification (event_id is required), so it is a protocol violation;
	// the stream itself is still in sync.
	ErrEmptyFrame = errors.New("rsbsocket: empty frame")

	// ErrBadHandshake reports that the server's greeting was not exactly
	// four zero bytes.
	ErrBadHandshake = errors.New("rsbsocket: bad handshake")
)

// handshake is the server's greeting.
var handshake = [handshakeSize]byte{}

// WriteHandshake writes the server's greeting, exactly 4 zero bytes, to w.
func WriteHandshake(w io.Writer) error {
	_, err := w.Write(handshake[:])
	return err
}

// ReadHandshake reads exactly 4 bytes from r and checks that they are all
// zero, as an RSB socket client does right after connecting. A short read or
// any other bytes give an error wrapping ErrBadHandshake.
func ReadHandshake(r io.Reader) error {
	var b [handshakeSize]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		if err == io.EOF { // closed before a single byte
			return fmt.Errorf("%w: the server closed the connection before greeting it "+
				"(an rsbd at its connection limit does; see its log and rsbd_socket_connections_refused_total): %w",
				ErrBadHandshake, err)
		}
		return fmt.Errorf("%w: %w", ErrBadHandshake, err)
	}
	if b != handshake {
		return fmt.Errorf("%w: got % x, want 00 00 00 00", ErrBadHandshake, b[:])
	}
	return nil
}

// AppendFrame appends the frame for body (the 4-byte little-endian length,
// then body) to dst and returns the extended slice. body must be shorter
// than 4 GiB.
func AppendFrame(dst, body []byte) []byte {
	dst = AppendHeader(dst, len(body))
	return append(dst, body...)
}

// AppendHeader appends the header of a frame with an n-byte body, the
// 4-byte little-endian length n, to dst and returns the extended slice.
func AppendHeader(dst []byte, n int) []byte {
	return binary.LittleEndian.AppendUint32(dst, uint32(n))
}

// ReadFrame reads one frame from r and returns its body.
//
// maxSize bounds the body (maxSize <= 0 means DefaultMaxFrameSize); a larger
// announced length yields ErrFrameTooLarge before anything is allocated, with
// the body left unread. A zero length yields ErrEmptyFrame. The body goes into
// buf when cap(buf) suffices, else into new memory; bodies above 1 MiB are
// grown in a few steps as their bytes arrive rather than allocated from the
// claimed length, so a peer that announces a large frame and stalls holds
// at most 1 MiB or four times what it sent, whichever is more.
// A clean EOF before the header gives io.EOF; EOF inside a frame gives
// io.ErrUnexpectedEOF.
func ReadFrame(r *bufio.Reader, maxSize int, buf []byte) ([]byte, error) {
	return ReadFrameSized(r, maxSize, buf, nil)
}

// ReadFrameSized is ReadFrame asking get, when it is not nil, for the
// memory of a body that does not fit in buf once its length n is known:
// a slice of capacity n or more is read into, any other answer (nil)
// leaves the body to ReadFrame's own memory.
func ReadFrameSized(r *bufio.Reader, maxSize int, buf []byte, get func(n int) []byte) ([]byte, error) {
	n, err := readHeader(r, maxSize)
	if err != nil {
		return nil, err
	}
	if n > cap(buf) && get != nil {
		if b := get(n); cap(b) >= n {
			buf = b
		}
	}
	if n <= cap(buf) || n <= EagerAllocMax {
		if n > cap(buf) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, unexpected(err)
		}
		return buf, nil
	}
	return readGrowing(r, n)
}

// ReadFrameRoom is ReadFrame into new memory with room around the body, for
// a reader that hands each body on (ParseOwned): a body of at most
// EagerAllocMax bytes lies at room[rm.Head:], with rm.Tail bytes after it
// (room is the body's own allocation when rm is zero); a larger one comes
// without room (room is nil). A larger body of at most eagerWholeMax bytes
// is allocated at once from its header when budget (nil: never) has room
// for it; otherwise it is grown as ReadFrame grows it.
func ReadFrameRoom(r *bufio.Reader, maxSize int, rm Room, budget *LargeBudget) (body, room []byte, err error) {
	n, err := readHeader(r, maxSize)
	if err != nil {
		return nil, nil, err
	}
	if n > EagerAllocMax {
		body, err = readLarge(r, n, budget)
		return body, nil, err
	}
	room = make([]byte, rm.Head+n+rm.Tail)
	body = room[rm.Head : rm.Head+n : rm.Head+n]
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, nil, unexpected(err)
	}
	return body, room, nil
}

// LargeBudget counts the bytes of large bodies ReadFrameRoom is reading
// into memory allocated whole from their headers, bounded by EagerBudget;
// the readers of one server share one. Its zero value is an unused budget;
// it is safe for concurrent use.
type LargeBudget struct {
	inUse atomic.Int64
	// refused counts the bodies grown instead because the budget was taken.
	refused atomic.Uint64
}

// InUse returns the bytes of large bodies being read within the budget.
func (b *LargeBudget) InUse() int64 { return b.inUse.Load() }

// Refused counts the large bodies that were grown instead of allocated
// whole because the budget was taken.
func (b *LargeBudget) Refused() uint64 { return b.refused.Load() }

// take reserves n bytes and reports whether they were within the budget.
func (b *LargeBudget) take(n int) bool {
	if b.inUse.Add(int64(n)) <= EagerBudget {
		return true
	}
	b.inUse.Add(-int64(n))
	b.refused.Add(1)
	return false
}

// give returns n bytes take reserved.
func (b *LargeBudget) give(n int) { b.inUse.Add(-int64(n)) }

// readLarge reads an n-byte body, n > EagerAllocMax: into one allocation
// of n bytes when n is at most eagerWholeMax and budget has room for it
// (given back once the body is read, or its read failed), else growing
// (readGrowing).
func readLarge(r *bufio.Reader, n int, budget *LargeBudget) ([]byte, error) {
	if budget == nil || n > eagerWholeMax || !budget.take(n) {
		return readGrowing(r, n)
	}
	defer budget.give(n)
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, unexpected(err)
	}
	return body, nil
}

// readHeader reads and checks a frame header.
func readHeader(r *bufio.Reader, maxSize int) (int, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxFrameSize
	}
	h, err := r.Peek(HeaderSize)
	if err != nil {
		if len(h) > 0 {
			return 0, unexpected(err)
		}
		return 0, err
	}
	n := binary.LittleEndian.Uint32(h)
	_, _ = r.Discard(HeaderSize)
	if n == 0 {
		return 0, ErrEmptyFrame
	}
	if uint64(n) > uint64(maxSize) || uint64(n) > math.MaxInt {
		return 0, fmt.Errorf("%w: %d bytes announced, limit %d", ErrFrameTooLarge, n, maxSize)
	}
	return int(n), nil
}

// readGrowing reads an n-byte body, n > EagerAllocMax, into memory that
// grows with the bytes actually received: first ceil(n/growFactor^k) bytes
// for the least k that fits EagerAllocMax, then growFactor times more per
// step, the last step being exactly n.
func readGrowing(r *bufio.Reader, n int) ([]byte, error) {
	div := 1
	for ceilDiv(n, div) > EagerAllocMax {
		div *= growFactor
	}
	buf := make([]byte, 0, ceilDiv(n, div))
	for {
		m, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return nil, unexpected(err)
		}
		if div == 1 {
			return buf, nil
		}
		div /= growFactor
		grown := make([]byte, len(buf), ceilDiv(n, div))
		copy(grown, buf)
		buf = grown
	}
}

// ceilDiv returns n/d rounded up.
func ceilDiv(n, d int) int { return (n + d - 1) / d }

// SkipFrame reads one frame from r and discards its body without keeping
// it; it fails as ReadFrame does.
func SkipFrame(r *bufio.Reader, maxSize int) error {
	n, err := readHeader(r, maxSize)
	if err != nil {
		return err
	}
	if _, err := r.Discard(n); err != nil {
		return unexpected(err)
	}
	return nil
}

// Buffered reports whether r holds a whole frame, so that the next read of
// a frame returns without reading from r's source.
func Buffered(r *bufio.Reader) bool {
	n := r.Buffered()
	if n < HeaderSize {
		return false
	}
	h, err := r.Peek(HeaderSize)
	return err == nil && n-HeaderSize >= int(binary.LittleEndian.Uint32(h))
}

// unexpected turns an EOF inside a frame into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
