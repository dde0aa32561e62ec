package frame

import "fmt"

// MsgType is the kind of a frame. Wire values: append only.
type MsgType uint8

// The message types.
const (
	// StreamReq opens a stream: attributes sid, replyTo, model, conv; the
	// data is the prompt.
	StreamReq MsgType = 1
	// StreamChunk is one piece of a stream: seq numbers it, the done flag
	// ends the stream; attributes sid, etype, err, meta.
	StreamChunk MsgType = 2
	// Event carries a CloudEvent: its attributes and its data.
	Event MsgType = 3
)

// String returns the reference's name of t.
func (t MsgType) String() string {
	switch t {
	case StreamReq:
		return "STREAM_REQ"
	case StreamChunk:
		return "STREAM_CHUNK"
	case Event:
		return "EVENT"
	}
	return fmt.Sprintf("MsgType(%d)", uint8(t))
}

// Flags are the header's flag bits. Wire values: append only.
type Flags uint8

// The flags; bits 3 to 7 are reserved and kept as they are.
const (
	// FlagDone marks the last chunk of a stream.
	FlagDone Flags = 1 << 0
	// FlagHasError marks a chunk that carries an err attribute.
	FlagHasError Flags = 1 << 1
	// FlagHasMeta marks a chunk that carries a meta attribute.
	FlagHasMeta Flags = 1 << 2
)

// Well-known attribute names of the streaming frames.
const (
	AttrSession      = "sid"
	AttrReplyTo      = "replyTo"
	AttrModel        = "model"
	AttrConversation = "conv"
	AttrEventType    = "etype"
	AttrError        = "err"
	AttrMeta         = "meta"
)

// Attr is a frame attribute.
type Attr struct {
	Name  string
	Value string
}

// Frame is an EventMeshFrame.
type Frame struct {
	// Type is the message type.
	Type MsgType
	// Flags are the flag bits, reserved ones included.
	Flags Flags
	// Seq numbers a STREAM_CHUNK within its stream; 0 otherwise.
	Seq uint32
	// Attrs are the attributes in wire order; a name may repeat.
	Attrs []Attr
	// Data is the payload.
	Data []byte
}

// Get returns the value of the last attribute called name.
func (f *Frame) Get(name string) (string, bool) {
	for i := len(f.Attrs) - 1; i >= 0; i-- {
		if f.Attrs[i].Name == name {
			return f.Attrs[i].Value, true
		}
	}
	return "", false
}

// Set sets the value of the attributes called name, or appends one.
func (f *Frame) Set(name, value string) {
	found := false
	for i := range f.Attrs {
		if f.Attrs[i].Name == name {
			f.Attrs[i].Value, found = value, true
		}
	}
	if !found {
		f.Attrs = append(f.Attrs, Attr{name, value})
	}
}

// Size returns the length of f's encoding.
func (f *Frame) Size() int {
	n := HeaderLen + len(f.Data)
	for _, a := range f.Attrs {
		n += attrOverhead + len(a.Name) + len(a.Value)
	}
	return n
}
