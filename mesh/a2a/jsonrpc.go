package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// JSON-RPC 2.0 error codes, and the A2A ones. Values: append only.
const (
	CodeParseError                = -32700 // the bytes are not JSON
	CodeInvalidRequest            = -32600 // the JSON is not a JSON-RPC request
	CodeMethodNotFound            = -32601 // no such method
	CodeInvalidParams             = -32602 // the params do not suit the method
	CodeInternalError             = -32603 // the call failed on the way or at the agent
	CodeTaskNotFound              = -32001 // A2A: no such task
	CodeTaskNotCancelable         = -32002 // A2A: the task cannot be cancelled
	CodePushNotSupported          = -32003 // A2A: push notifications are not supported
	CodeUnsupportedOperation      = -32004 // A2A: the agent does not support the operation
	CodeContentTypeNotSupported   = -32005 // A2A: a media type is not supported
	CodeInvalidAgentResponse      = -32006 // A2A: the agent's answer is not valid
	CodeExtendedCardNotConfigured = -32007 // A2A: no extended agent card
	CodeExtensionSupportRequired  = -32008 // A2A: the client must support an extension
	CodeVersionNotSupported       = -32009 // A2A: the A2A-Version is not served
)

// Error is a JSON-RPC error object; it is the error Decode returns.
type Error struct {
	// Code is the error code: a JSON-RPC one or an A2A one.
	Code int `json:"code"`
	// Message says what went wrong.
	Message string `json:"message"`
	// Data is optional detail, any JSON value.
	Data json.RawMessage `json:"data,omitempty"`
}

// Error returns the code and the message.
func (e *Error) Error() string { return fmt.Sprintf("a2a: JSON-RPC error %d: %s", e.Code, e.Message) }

// errorf returns an Error with code and a formatted message.
func errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Message is a decoded JSON-RPC 2.0 message: a request (Method set) or a
// response (Result or Error set). The raw fields share the input's memory.
type Message struct {
	// Raw is the whole message as received.
	Raw []byte
	// JSONRPC is the jsonrpc member, "2.0".
	JSONRPC string
	// ID is the id member as it was sent (a string, a number or null);
	// nil when absent.
	ID json.RawMessage
	// Method is the method of a request.
	Method string
	// Params are the params of a request, an object or an array; nil when
	// absent.
	Params json.RawMessage
	// Result and Error are the members of a response.
	Result, Error json.RawMessage
}

// Decode decodes one JSON-RPC 2.0 message from untrusted bytes. It returns
// an *Error: CodeParseError for bytes that are not one JSON value,
// CodeInvalidRequest for a value that is not a well-formed JSON-RPC 2.0
// request or response (batches included: A2A sends none). It never panics.
func Decode(b []byte) (*Message, error) {
	if len(b) > MaxMessageBytes {
		return nil, errorf(CodeInvalidRequest, "message of %d bytes, at most %d", len(b), MaxMessageBytes)
	}
	if !utf8.Valid(b) || !json.Valid(b) {
		return nil, errorf(CodeParseError, "not a JSON value")
	}
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		if len(t) > 0 && t[0] == '[' {
			return nil, errorf(CodeInvalidRequest, "batches are not supported")
		}
		return nil, errorf(CodeInvalidRequest, "not a JSON object")
	}
	// A map keeps the members' exact names (JSON-RPC's are case-sensitive);
	// a name given twice takes its last value.
	var w map[string]json.RawMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, errorf(CodeInvalidRequest, "malformed envelope: %v", err)
	}
	m := &Message{Raw: b, ID: w["id"], Params: w["params"], Result: w["result"], Error: w["error"]}
	if string(w["jsonrpc"]) != `"2.0"` {
		return nil, errorf(CodeInvalidRequest, `jsonrpc must be "2.0"`)
	}
	m.JSONRPC = "2.0"
	if err := checkID(m.ID); err != nil {
		return nil, err
	}
	if raw, ok := w["method"]; ok {
		var method string
		if json.Unmarshal(raw, &method) != nil {
			return nil, errorf(CodeInvalidRequest, "method must be a string")
		}
		return m, m.checkRequest(method)
	}
	return m, m.checkResponse()
}

// checkRequest checks a request's method and params.
func (m *Message) checkRequest(method string) error {
	if m.Result != nil || m.Error != nil {
		return errorf(CodeInvalidRequest, "a request with a result or an error")
	}
	if method == "" || len(method) > MaxMethodBytes {
		return errorf(CodeInvalidRequest, "method must have 1 to %d bytes", MaxMethodBytes)
	}
	m.Method = method
	if p := bytes.TrimLeft(m.Params, " \t\r\n"); m.Params != nil && (len(p) == 0 || p[0] != '{' && p[0] != '[') {
		return errorf(CodeInvalidRequest, "params must be an object or an array")
	}
	return nil
}

// checkResponse checks a response has exactly one of result and error.
func (m *Message) checkResponse() error {
	if (m.Result == nil) == (m.Error == nil) {
		return errorf(CodeInvalidRequest, "neither a request nor a response (method, or one of result and error)")
	}
	if m.Error != nil {
		var e Error
		if json.Unmarshal(m.Error, &e) != nil || e.Message == "" && e.Code == 0 {
			return errorf(CodeInvalidRequest, "error must be an object with code and message")
		}
	}
	return nil
}

// checkID checks an id is absent, a string, a number or null, and short.
func checkID(id json.RawMessage) error {
	if id == nil {
		return nil
	}
	if len(id) > MaxIDBytes {
		return errorf(CodeInvalidRequest, "id of %d bytes, at most %d", len(id), MaxIDBytes)
	}
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return nil
	}
	return errorf(CodeInvalidRequest, "id must be a string, a number or null")
}

// IDString returns the id as text: a string's contents, a number's
// digits; "" for an absent or null id.
func (m *Message) IDString() string {
	if m.ID == nil || string(m.ID) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(m.ID, &s) == nil {
		return s
	}
	return string(m.ID)
}

// response is a JSON-RPC response as the handler writes it.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// appendResult appends the response of request id with result.
func appendResult(b []byte, id, result json.RawMessage) []byte {
	out, err := json.Marshal(response{JSONRPC: "2.0", ID: idOrNull(id), Result: result})
	if err != nil {
		return appendError(b, id, errorf(CodeInvalidAgentResponse, "the agent's answer is not JSON"))
	}
	return append(b, out...)
}

// appendError appends the error response of request id (nil: null).
func appendError(b []byte, id json.RawMessage, e *Error) []byte {
	out, _ := json.Marshal(response{JSONRPC: "2.0", ID: idOrNull(id), Error: e})
	return append(b, out...)
}

// idOrNull returns id, or null for none.
func idOrNull(id json.RawMessage) json.RawMessage {
	if id == nil {
		return json.RawMessage("null")
	}
	return id
}
