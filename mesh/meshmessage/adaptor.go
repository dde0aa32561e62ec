package meshmessage

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/mesh/frame"
)

// Protocol is the name the package's FrameAdaptor is registered under.
const Protocol = "meshmessage"

// Attribute values the adaptor sets on ingress.
const (
	// MessageType is the type of an EVENT made from an EventMeshMessage.
	MessageType = "eventmeshmessage"
	// MessageSource is its source.
	MessageSource = "/"
	// AttrOrigin names the protocol an event entered by.
	AttrOrigin = "emorigin"
)

// More errors callers branch on.
var (
	// ErrBadMessage: a body is not an EventMeshMessage in JSON, or its
	// properties do not make a valid CloudEvent.
	ErrBadMessage = errors.New("meshmessage: bad message")
	// ErrBinaryData: an event's data is not UTF-8 text, which an
	// EventMeshMessage body must be.
	ErrBinaryData = errors.New("meshmessage: data is not UTF-8 text")
)

func init() { mesh.Register(Adaptor{}) }

// Message is an EventMeshMessage, the body of the message commands.
type Message struct {
	// Topic names the destination; it is the event's subject, the scope.
	Topic string `json:"topic"`
	// Properties become event attributes.
	Properties map[string]string `json:"properties,omitempty"`
	// Headers become event attributes after Properties.
	Headers map[string]string `json:"headers,omitempty"`
	// Body is the payload, text.
	Body string `json:"body"`
}

// egressFixed are the attributes FromFrame keeps out of the properties.
var egressFixed = map[string]bool{
	"type": true, AttrOrigin: true, "id": true, "subject": true, "source": true,
	"specversion": true, "time": true, "dataschema": true, "datacontenttype": true,
}

// Adaptor is the FrameAdaptor of the legacy TCP protocol: its messages
// are EventMeshMessages in JSON.
type Adaptor struct{}

// Protocol returns "meshmessage".
func (Adaptor) Protocol() string { return Protocol }

// ToFrame decodes an EventMeshMessage, or that message as a JSON string,
// and returns its EVENT frame. With no Package there is no seq, so the id
// is a random one unless the properties or headers set it.
func (Adaptor) ToFrame(msg []byte) (*frame.Frame, error) { return messageFrame(msg, "") }

// FromFrame returns the EventMeshMessage of an EVENT frame.
func (Adaptor) FromFrame(f *frame.Frame) ([]byte, error) {
	m, err := FrameMessage(f)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// PackageFrame returns the EVENT frame of a message Package: id is the
// header's seq. A body the protocoltype property marks as a CloudEvent is
// taken as one; any other is an EventMeshMessage.
func PackageFrame(p *Package) (*frame.Frame, error) {
	if p.Header.Properties[PropProtocolType] == ProtocolCloudEvents {
		e, err := cloudevent.Unmarshal(p.Body)
		if err != nil {
			return nil, err
		}
		return frame.FromCloudEvent(e)
	}
	return messageFrame(p.Body, p.Header.Seq)
}

// messageFrame maps an EventMeshMessage to an EVENT frame as the
// reference does: fixed attributes first, then properties and headers,
// which may overwrite them, each in name order so the frame is the same
// for the same message.
func messageFrame(msg []byte, seq string) (*frame.Frame, error) {
	var m Message
	if len(msg) > 0 && msg[0] == '"' {
		var s string
		if err := json.Unmarshal(msg, &s); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadMessage, err)
		}
		msg = []byte(s)
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadMessage, err)
	}
	f := &frame.Frame{Type: frame.Event, Data: []byte(m.Body)}
	f.Set("specversion", "1.0")
	f.Set("type", MessageType)
	f.Set("source", MessageSource)
	f.Set(AttrOrigin, Protocol)
	f.Set("id", seq)
	f.Set("subject", m.Topic)
	for _, kv := range []map[string]string{m.Properties, m.Headers} {
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			f.Set(k, kv[k])
		}
	}
	if v, _ := f.Get("id"); v == "" {
		f.Set("id", randomID())
	}
	// The frame must carry a valid CloudEvent: every listener and the bus
	// read it as one.
	e, err := f.CloudEvent()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadMessage, err)
	}
	return frame.FromCloudEvent(e)
}

// FrameMessage returns the EventMeshMessage of an EVENT frame: the
// subject is the topic, the data the body, and every other attribute
// but the fixed ones a property; a repeated name keeps its last value.
func FrameMessage(f *frame.Frame) (*Message, error) {
	if f.Type != frame.Event {
		return nil, fmt.Errorf("%w: %s", frame.ErrNotEvent, f.Type)
	}
	if !utf8.Valid(f.Data) {
		return nil, ErrBinaryData
	}
	m := &Message{Body: string(f.Data)}
	m.Topic, _ = f.Get("subject")
	for _, a := range f.Attrs {
		if egressFixed[a.Name] {
			continue
		}
		if m.Properties == nil {
			m.Properties = make(map[string]string)
		}
		m.Properties[a.Name] = a.Value
	}
	return m, nil
}

// FramePackage returns the Package with command cmd and seq carrying the
// EventMeshMessage of an EVENT frame.
func FramePackage(f *frame.Frame, cmd Command, seq string) (*Package, error) {
	m, err := FrameMessage(f)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &Package{
		Header: Header{Command: cmd, Seq: seq, Properties: map[string]string{PropProtocolType: ProtocolMeshMessage}},
		Body:   body,
	}, nil
}

// randomID returns a fresh event id.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
