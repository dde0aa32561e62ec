package fragmentation

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// Split cuts n into FragmentedNotifications whose serializations are each at
// most maxFragmentSize bytes (0 selects DefaultMaxFragmentSize). No event size
// limit applies beyond the uint32 range of num_data_parts; a Splitter enforces
// one. The fragments share memory with n (data, event id, causes, meta data)
// and with each other: treat them as read-only and leave n unchanged while
// they are in use.
func Split(n *rsbpb.Notification, maxFragmentSize int) ([]*rsbpb.FragmentedNotification, error) {
	s, err := unlimitedSplitter(maxFragmentSize)
	if err != nil {
		return nil, err
	}
	return s.Split(n)
}

// AppendSplit appends the serialized fragments of n to dst, each at most
// maxFragmentSize bytes (0 selects DefaultMaxFragmentSize), and returns the
// extended slice. The fragments of one event share one new backing array; each
// appended slice has its capacity cut to its length. On error dst is returned
// unchanged. Serializing the result of Split gives the same bytes.
func AppendSplit(dst [][]byte, n *rsbpb.Notification, maxFragmentSize int) ([][]byte, error) {
	s, err := unlimitedSplitter(maxFragmentSize)
	if err != nil {
		return dst, err
	}
	return s.AppendSplit(dst, n)
}

func unlimitedSplitter(maxFragmentSize int) (*Splitter, error) {
	if maxFragmentSize < 0 {
		return nil, fmt.Errorf("%w: negative fragment size %d", ErrInvalidConfig, maxFragmentSize)
	}
	return &Splitter{cfg: SplitConfig{
		MaxFragmentSize: orDefault(maxFragmentSize, DefaultMaxFragmentSize),
		MaxEventSize:    math.MaxInt,
		MaxParts:        math.MaxUint32,
	}}, nil
}

// Splitter splits events under a SplitConfig and reuses its header scratch
// space between calls, so AppendSplit allocates only the fragments' backing
// array (and dst's growth). A Splitter is not safe for concurrent use.
type Splitter struct {
	cfg     SplitConfig
	hdr     *rsbpb.Notification // header of fragment 0, refilled per event
	scratch []byte              // serialized header, reused
}

// NewSplitter returns a Splitter for cfg after filling in its defaults.
func NewSplitter(cfg SplitConfig) (*Splitter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Splitter{cfg: cfg.withDefaults()}, nil
}

// Config returns the Splitter's configuration with defaults filled in.
func (s *Splitter) Config() SplitConfig { return s.cfg }

// Split is the package-level Split under the Splitter's limits; events over
// MaxEventSize data bytes or MaxParts fragments fail with ErrEventTooLarge.
func (s *Splitter) Split(n *rsbpb.Notification) ([]*rsbpb.FragmentedNotification, error) {
	if err := s.check(n); err != nil {
		return nil, err
	}
	hdrLen := proto.Size(s.fillHeader(n))
	s.hdr.Reset()
	idLen := protowire.SizeTag(fieldEventID) + protowire.SizeBytes(proto.Size(n.EventId))
	l, err := s.plan(hdrLen, idLen, n.Data)
	if err != nil {
		return nil, err
	}
	frags := make([]rsbpb.FragmentedNotification, l.total)
	notes := make([]rsbpb.Notification, l.total)
	counters := make([]uint32, l.total+1) // [0] = total, [i+1] = i
	counters[0] = uint32(l.total)
	out := make([]*rsbpb.FragmentedNotification, l.total)
	for i := range l.total {
		note := &notes[i]
		note.EventId = n.EventId
		note.Data = l.chunk(n.Data, i)
		if i == 0 {
			copyHeader(note, n)
		}
		counters[i+1] = uint32(i)
		f := &frags[i]
		f.Notification, f.NumDataParts, f.DataPart = note, &counters[0], &counters[i+1]
		out[i] = f
	}
	return out, nil
}

// AppendSplit is the package-level AppendSplit under the Splitter's limits;
// events over MaxEventSize data bytes or MaxParts fragments fail with
// ErrEventTooLarge.
func (s *Splitter) AppendSplit(dst [][]byte, n *rsbpb.Notification) ([][]byte, error) {
	if err := s.check(n); err != nil {
		return dst, err
	}
	hb, err := proto.MarshalOptions{}.MarshalAppend(s.scratch[:0], s.fillHeader(n))
	s.hdr.Reset()
	if err != nil {
		return dst, fmt.Errorf("fragmentation: marshal header: %w", err)
	}
	s.scratch = hb
	at, id, err := scanHeader(hb)
	if err != nil {
		return dst, err
	}
	l, err := s.plan(len(hb), len(id), n.Data)
	if err != nil {
		return dst, err
	}
	size := 0
	for i := range l.total {
		size += fragmentSize(l.innerSize(len(hb), len(id), n.Data, i), l.total, i)
	}
	buf := make([]byte, 0, size)
	dst = slices.Grow(dst, l.total)
	for i := range l.total {
		start := len(buf)
		buf = appendFragment(buf, l, i, hb, at, id, n.Data)
		dst = append(dst, buf[start:len(buf):len(buf)])
	}
	return dst, nil
}

// check validates n's event id and data size.
func (s *Splitter) check(n *rsbpb.Notification) error {
	if n == nil || n.EventId == nil || n.EventId.SequenceNumber == nil ||
		len(n.EventId.SenderId) != senderIDSize {
		return ErrInvalidEventID
	}
	if len(n.Data) > s.cfg.MaxEventSize {
		return fmt.Errorf("%w: %d data bytes exceed %d", ErrEventTooLarge, len(n.Data), s.cfg.MaxEventSize)
	}
	return nil
}

// plan computes the layout and checks the part count.
func (s *Splitter) plan(hdrLen, idLen int, data []byte) (layout, error) {
	l, err := planLayout(hdrLen, idLen, len(data), data != nil, s.cfg.MaxFragmentSize)
	if err != nil {
		return layout{}, err
	}
	if l.total > s.cfg.MaxParts {
		return layout{}, fmt.Errorf("%w: %d fragments exceed %d", ErrEventTooLarge, l.total, s.cfg.MaxParts)
	}
	return l, nil
}

// fillHeader sets the reused header message to n without its data.
func (s *Splitter) fillHeader(n *rsbpb.Notification) *rsbpb.Notification {
	if s.hdr == nil {
		s.hdr = new(rsbpb.Notification)
	}
	s.hdr.EventId = n.EventId
	copyHeader(s.hdr, n)
	return s.hdr
}

// copyHeader copies n's header fields (all but event id and data) and its
// unknown fields into dst.
func copyHeader(dst, n *rsbpb.Notification) {
	dst.Scope, dst.Method, dst.WireSchema = n.Scope, n.Method, n.WireSchema
	dst.Causes, dst.MetaData = n.Causes, n.MetaData
	if u := n.ProtoReflect().GetUnknown(); len(u) > 0 {
		dst.ProtoReflect().SetUnknown(u)
	}
}

var errBadHeader = errors.New("fragmentation: serialized header has no event id")

// scanHeader finds, in a serialized Notification without data, the offset
// where the data field belongs (before the first field numbered above it, as
// protobuf orders fields) and the serialized event_id field.
func scanHeader(hb []byte) (at int, id []byte, err error) {
	at = -1
	for off := 0; off < len(hb); {
		num, typ, n := protowire.ConsumeTag(hb[off:])
		if n < 0 {
			return 0, nil, errBadHeader
		}
		m := protowire.ConsumeFieldValue(num, typ, hb[off+n:])
		if m < 0 {
			return 0, nil, errBadHeader
		}
		if at < 0 && num > fieldData {
			at = off
		}
		if num == fieldEventID && id == nil {
			id = hb[off : off+n+m]
		}
		off += n + m
	}
	if id == nil {
		return 0, nil, errBadHeader
	}
	if at < 0 {
		at = len(hb)
	}
	return at, id, nil
}

// appendFragment appends the serialized fragment i of an event with header hb
// (data field position at) and event_id field id.
func appendFragment(b []byte, l layout, i int, hb []byte, at int, id []byte, data []byte) []byte {
	chunk := l.chunk(data, i)
	b = protowire.AppendTag(b, fieldNotification, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(l.innerSize(len(hb), len(id), data, i)))
	if i == 0 {
		b = append(b, hb[:at]...)
		if chunk != nil || l.total > 1 {
			b = appendDataField(b, chunk)
		}
		b = append(b, hb[at:]...)
	} else {
		b = appendDataField(b, chunk)
		b = append(b, id...)
	}
	b = protowire.AppendTag(b, fieldNumDataParts, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(l.total))
	b = protowire.AppendTag(b, fieldDataPart, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(i))
}

func appendDataField(b, chunk []byte) []byte {
	b = protowire.AppendTag(b, fieldData, protowire.BytesType)
	return protowire.AppendBytes(b, chunk)
}
