package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/rsbd/rsbd/mesh/frame"
)

// VersionHeader is the HTTP header naming the A2A version of a request.
const VersionHeader = "A2A-Version"

// request is a JSON-RPC request the handler accepted: its message, version,
// operation and frame.
type request struct {
	m      *Message
	v      Version
	method Method
	frame  *frame.Frame
	// contextID is params.message.contextId, when given.
	contextID string
}

// parse checks a request body against JSON-RPC and A2A: a request with an
// id, a version served, a method of that version and params it takes. The
// request is returned with the error when its id is known, for the error
// response.
func (h *Handler) parse(r *http.Request, body []byte) (*request, *Error) {
	m, err := Decode(body)
	if err != nil {
		var e *Error
		errors.As(err, &e)
		if e.Code == CodeParseError {
			h.ctr.Reject(reasonParse)
		} else {
			h.ctr.Reject(reasonInvalid)
		}
		return nil, e
	}
	req := &request{m: m}
	e := req.check(r.Header.Get(VersionHeader))
	if e != nil {
		switch e.Code {
		case CodeVersionNotSupported:
			h.ctr.Reject(reasonVersion)
		case CodeMethodNotFound:
			h.ctr.Reject(reasonMethod)
		case CodeInvalidParams:
			h.ctr.Reject(reasonParams)
		default:
			h.ctr.Reject(reasonInvalid)
		}
		return req, e
	}
	return req, nil
}

// check checks the decoded message as an A2A request of the version the
// header names, and makes its frame.
func (req *request) check(versionHeader string) *Error {
	m := req.m
	if m.Method == "" {
		return errorf(CodeInvalidRequest, "the endpoint takes requests, not responses")
	}
	if m.ID == nil || string(m.ID) == "null" {
		return errorf(CodeInvalidRequest, "an A2A request needs an id")
	}
	var err error
	if req.v, err = ParseVersion(versionHeader); err != nil {
		return err.(*Error)
	}
	if req.method, err = Lookup(m.Method, req.v); err != nil {
		return err.(*Error)
	}
	if e := req.checkParams(); e != nil {
		return e
	}
	f, err := m.Frame()
	if err != nil {
		return err.(*Error)
	}
	f.Set(AttrProtocolVersion, req.v.String())
	req.frame = f
	return nil
}

// checkParams checks the params are an object and, for the operations
// that send a message, hold one with parts.
func (req *request) checkParams() *Error {
	p := bytes.TrimLeft(req.m.Params, " \t\r\n")
	if len(p) == 0 || p[0] != '{' {
		return errorf(CodeInvalidParams, "params must be an object")
	}
	if req.method.V03 != "message/send" && req.method.V03 != "message/stream" {
		return nil
	}
	var params struct {
		Message *struct {
			Parts     []json.RawMessage `json:"parts"`
			ContextID string            `json:"contextId"`
		} `json:"message"`
	}
	if err := json.Unmarshal(p, &params); err != nil {
		return errorf(CodeInvalidParams, "params: %v", err)
	}
	if params.Message == nil || len(params.Message.Parts) == 0 {
		return errorf(CodeInvalidParams, "params.message must be a message with at least one part")
	}
	req.contextID = params.Message.ContextID
	return nil
}
