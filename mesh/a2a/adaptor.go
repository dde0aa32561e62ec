package a2a

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/mesh/frame"
)

// Protocol is the name the A2A adaptor is registered under.
const Protocol = "a2a"

// Attribute names and values the adaptor sets, as the EventMesh A2A
// adaptor does.
const (
	AttrMethod          = "a2amethod"       // a request's method
	AttrJSONRPCVersion  = "ema2aversion"    // the jsonrpc member
	AttrProtocol        = "protocol"        // always "a2a"
	AttrProtocolVersion = "protocolversion" // the A2A-Version a request came with
	AttrTargetAgent     = "targetagent"     // params._agentId
	AttrSeq             = "seq"             // params._seq
	// Source is the source attribute of every A2A frame.
	Source = "eventmesh-a2a"
	// TypePrefix and TypeRequestSuffix make a request's type:
	// TypePrefix + method with '/' as '.' + TypeRequestSuffix.
	TypePrefix        = "org.apache.eventmesh.a2a."
	TypeRequestSuffix = ".req"
	// TypeResponse is the type of every response.
	TypeResponse = "org.apache.eventmesh.a2a.common.response"
)

func init() { mesh.Register(Adaptor{}) }

// Adaptor is the "a2a" FrameAdaptor: a JSON-RPC 2.0 message to an EVENT
// frame and back. The frame's data is the message verbatim; its
// attributes describe it (see ToFrame). It keeps no state.
type Adaptor struct{}

// Protocol returns "a2a".
func (Adaptor) Protocol() string { return Protocol }

// ToFrame decodes a JSON-RPC message (Decode) and returns its EVENT
// frame: specversion 1.0, source eventmesh-a2a, id the JSON-RPC id (a
// random UUID when it has none), protocol a2a, ema2aversion the jsonrpc
// member; a request adds a2amethod and the type
// org.apache.eventmesh.a2a.<method, '/' as '.'>.req, a response has the
// type org.apache.eventmesh.a2a.common.response. Of the params,
// _topic becomes subject, _seq seq and _agentId targetagent (strings or
// numbers; other values are left out). The data is msg as it is.
func (Adaptor) ToFrame(msg []byte) (*frame.Frame, error) {
	m, err := Decode(msg)
	if err != nil {
		return nil, err
	}
	return m.Frame()
}

// Frame returns the EVENT frame of a decoded message (see
// Adaptor.ToFrame).
func (m *Message) Frame() (*frame.Frame, error) {
	id := m.IDString()
	if id == "" {
		id = newUUID()
	}
	f := &frame.Frame{Type: frame.Event, Data: m.Raw, Attrs: []frame.Attr{
		{Name: "specversion", Value: "1.0"}, {Name: "id", Value: id}, {Name: "source", Value: Source},
		{Name: AttrProtocol, Value: Protocol}, {Name: AttrJSONRPCVersion, Value: m.JSONRPC},
	}}
	if m.Method != "" {
		f.Set(AttrMethod, m.Method)
		f.Set("type", TypePrefix+strings.ReplaceAll(m.Method, "/", ".")+TypeRequestSuffix)
	} else {
		f.Set("type", TypeResponse)
	}
	m.paramAttrs(f)
	if _, err := frame.Marshal(f); err != nil {
		return nil, errorf(CodeInvalidRequest, "cannot carry the message: %v", err)
	}
	return f, nil
}

// paramAttrs sets the attributes the params' routing members give.
func (m *Message) paramAttrs(f *frame.Frame) {
	if len(m.Params) == 0 || m.Params[0] != '{' {
		return
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(m.Params, &p) != nil {
		return
	}
	for _, ma := range [...][2]string{{"_topic", "subject"}, {"_seq", AttrSeq}, {"_agentId", AttrTargetAgent}} {
		if v, ok := scalar(p[ma[0]]); ok {
			f.Set(ma[1], v)
		}
	}
}

// scalar returns a JSON string's contents or a number's text.
func scalar(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, s != ""
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), true
	}
	return "", false
}

// FromFrame returns the JSON-RPC message an A2A frame carries: its data,
// verbatim.
func (Adaptor) FromFrame(f *frame.Frame) ([]byte, error) {
	if f.Type != frame.Event {
		return nil, fmt.Errorf("%w: %s", frame.ErrNotEvent, f.Type)
	}
	if p, _ := f.Get(AttrProtocol); p != Protocol {
		return nil, fmt.Errorf("a2a: frame of protocol %q", p)
	}
	return f.Data, nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
