package streamcall

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rsbd/rsbd/mesh/frame"
	"github.com/rsbd/rsbd/scope"
)

// Request is what a caller asks a server.
type Request struct {
	// Prompt is the request's data.
	Prompt []byte
	// Model and Conv are the optional model and conversation attributes.
	Model, Conv string
	// Attrs are further attributes, passed on as they are (the well-known
	// names above take precedence).
	Attrs []frame.Attr
	// Session is the call's session id (sid); a server sees the caller's,
	// a caller leaves it empty and Call picks one.
	Session string
	// ReplyTo is the scope the chunks go to; a caller leaves it zero for
	// its Caller's reply scope.
	ReplyTo scope.Scope
	// Timeout is what remained of the call's time when it was sent; 0:
	// none given.
	Timeout time.Duration
}

// requestFrame returns the STREAM_REQ frame of req.
func requestFrame(req *Request) *frame.Frame {
	f := &frame.Frame{Type: frame.StreamReq, Data: req.Prompt, Attrs: append([]frame.Attr(nil), req.Attrs...)}
	f.Set(frame.AttrSession, req.Session)
	f.Set(frame.AttrReplyTo, req.ReplyTo.String())
	if req.Model != "" {
		f.Set(frame.AttrModel, req.Model)
	}
	if req.Conv != "" {
		f.Set(frame.AttrConversation, req.Conv)
	}
	if req.Timeout > 0 {
		f.Set(AttrTimeout, strconv.FormatInt(max(req.Timeout.Milliseconds(), 1), 10))
	}
	return f
}

// parseRequest reads a STREAM_REQ frame: sid and a valid replyTo scope are
// required, a timeout must be a positive number of milliseconds.
func parseRequest(f *frame.Frame) (*Request, error) {
	req := &Request{Prompt: f.Data}
	var ok bool
	if req.Session, ok = f.Get(frame.AttrSession); !ok || req.Session == "" {
		return nil, fmt.Errorf("%w: request without sid", ErrBadFrame)
	}
	rt, _ := f.Get(frame.AttrReplyTo)
	sc, err := scope.Parse(rt)
	if err != nil {
		return nil, fmt.Errorf("%w: replyTo: %w", ErrBadFrame, err)
	}
	req.ReplyTo = sc
	req.Model, _ = f.Get(frame.AttrModel)
	req.Conv, _ = f.Get(frame.AttrConversation)
	if t, ok := f.Get(AttrTimeout); ok {
		ms, err := strconv.ParseInt(t, 10, 64)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("%w: timeout %q", ErrBadFrame, t)
		}
		req.Timeout = min(time.Duration(ms)*time.Millisecond, maxTimeout)
	}
	for _, a := range f.Attrs {
		switch a.Name {
		case frame.AttrSession, frame.AttrReplyTo, frame.AttrModel, frame.AttrConversation, AttrTimeout:
		default:
			req.Attrs = append(req.Attrs, a)
		}
	}
	return req, nil
}

// chunkFrame returns the STREAM_CHUNK frame of c in session sid.
func chunkFrame(sid string, c *Chunk) *frame.Frame {
	f := &frame.Frame{Type: frame.StreamChunk, Seq: c.Seq, Data: c.Data,
		Attrs: []frame.Attr{{Name: frame.AttrSession, Value: sid}}}
	if c.Done {
		f.Flags |= frame.FlagDone
	}
	if c.EventType != "" {
		f.Attrs = append(f.Attrs, frame.Attr{Name: frame.AttrEventType, Value: c.EventType})
	}
	if c.Err != "" {
		f.Flags |= frame.FlagHasError
		f.Attrs = append(f.Attrs, frame.Attr{Name: frame.AttrError, Value: c.Err})
	}
	if c.Meta != "" {
		f.Flags |= frame.FlagHasMeta
		f.Attrs = append(f.Attrs, frame.Attr{Name: frame.AttrMeta, Value: c.Meta})
	}
	return f
}

// parseChunk reads a STREAM_CHUNK frame and returns its session and chunk.
func parseChunk(f *frame.Frame) (string, Chunk, error) {
	sid, ok := f.Get(frame.AttrSession)
	if !ok || sid == "" {
		return "", Chunk{}, fmt.Errorf("%w: chunk without sid", ErrBadFrame)
	}
	c := Chunk{Seq: f.Seq, Done: f.Flags&frame.FlagDone != 0, Data: f.Data}
	c.EventType, _ = f.Get(frame.AttrEventType)
	c.Err, _ = f.Get(frame.AttrError)
	c.Meta, _ = f.Get(frame.AttrMeta)
	if f.Flags&frame.FlagHasError != 0 && c.Err == "" {
		c.Err = "error without a message"
	}
	return sid, c, nil
}

// decode reads a frame of type want from an event's data.
func decode(data []byte, want frame.MsgType) (*frame.Frame, error) {
	f, err := frame.Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadFrame, err)
	}
	if f.Type != want {
		return nil, fmt.Errorf("%w: %s, want %s", ErrBadFrame, f.Type, want)
	}
	return f, nil
}

// truncate cuts s to at most frame.MaxValueBytes bytes on a rune boundary,
// so that an error message always fits an attribute.
func truncate(s string) string {
	if len(s) <= frame.MaxValueBytes {
		return s
	}
	s = s[:frame.MaxValueBytes]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}
