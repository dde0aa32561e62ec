package meshmessage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rsbd/rsbd/mesh"
)

// Errors of the listener's responses. Errors returned by the package wrap
// them with %w.
var (
	// ErrUnauthorized: HELLO carried no token, or an unknown one, or a
	// command came before HELLO while tokens are required.
	ErrUnauthorized = errors.New("meshmessage: missing or unknown token")
	// ErrForbidden: the client's token does not allow the topic.
	ErrForbidden = errors.New("meshmessage: topic not allowed for this token")
	// ErrTooManyRequests: the client has MaxRequests requests in flight.
	ErrTooManyRequests = errors.New("meshmessage: too many requests in flight")
	// ErrNoResponse: a request got no answer within its time to live.
	ErrNoResponse = errors.New("meshmessage: no response in time")
	// ErrClientFailed: the client answered a REQUEST_TO_CLIENT with a
	// failure code.
	ErrClientFailed = errors.New("meshmessage: the client's response is a failure")
	// errBus: the bus refused a publish or a call.
	errBus = errors.New("meshmessage: bus")
)

// UserAgent is the body of HELLO_REQUEST: who the client is. The
// listener reads only the token: Token, or for clients that have no such
// field Password.
type UserAgent struct {
	// Subsystem, Group and Purpose describe the client; they are logged.
	Subsystem string `json:"subsystem,omitempty"`
	Group     string `json:"group,omitempty"`
	Purpose   string `json:"purpose,omitempty"`
	// Username names the client.
	Username string `json:"username,omitempty"`
	// Password carries the bearer token for clients without Token.
	Password string `json:"password,omitempty"`
	// Token is the bearer token.
	Token string `json:"token,omitempty"`
}

// failure returns the result code and description of a failed request:
// CodeACLFail for a token's refusal, CodeOverload at a bound, CodeFail
// otherwise.
func failure(err error) (int, string) {
	switch {
	case errors.Is(err, ErrUnauthorized), errors.Is(err, ErrForbidden):
		return CodeACLFail, err.Error()
	case errors.Is(err, ErrTooManyRequests):
		return CodeOverload, err.Error()
	}
	return CodeFail, err.Error()
}

// rejectReason returns the refusal reason counted for a failed request.
func rejectReason(err error) string {
	switch {
	case errors.Is(err, ErrUnauthorized):
		return RejectUnauthorized
	case errors.Is(err, ErrForbidden):
		return RejectForbidden
	case errors.Is(err, ErrTooManyRequests):
		return RejectRequests
	case errors.Is(err, errBus), errors.Is(err, ErrClosed):
		return RejectBus
	}
	return RejectMalformed
}

// responses are the commands the listener answers to each request
// command, besides HELLO and CLIENT_GOODBYE.
var responses = map[Command]Command{
	HeartbeatRequest:         HeartbeatResponse,
	SubscribeRequest:         SubscribeResponse,
	UnsubscribeRequest:       UnsubscribeResponse,
	ListenRequest:            ListenResponse,
	AsyncMessageToServer:     AsyncMessageToServerAck,
	BroadcastMessageToServer: BroadcastMessageToServerAck,
	RequestToServer:          ResponseToClient,
}

// handle acts on one Package; false ends the reading.
func (c *conn) handle(p *Package) bool {
	cmd := p.Header.Command
	switch {
	case cmd == HelloRequest:
		return c.hello(p)
	case cmd == ClientGoodbyeRequest:
		c.farewell(&Package{Header: Header{Command: ClientGoodbyeResponse, Seq: p.Header.Seq}})
		return false
	case !c.greeted.Load() && c.s.tokens.Load().Required() && cmd != HeartbeatRequest:
		c.s.st.Reject(RejectUnauthorized)
		if rsp, ok := responses[cmd]; ok {
			c.writeNow(&Package{Header: Header{Command: rsp, Seq: p.Header.Seq, Code: CodeACLFail,
				Desc: fmt.Sprintf("%v: HELLO with a token first", ErrUnauthorized)}})
		}
		c.end(CloseUnauthorized)
		return false
	}
	c.serve(p)
	return true
}

// serve acts on a command of a client that may send it.
func (c *conn) serve(p *Package) {
	switch cmd := p.Header.Command; cmd {
	case HeartbeatRequest:
		c.reply(p, HeartbeatResponse, nil)
	case SubscribeRequest:
		c.reply(p, SubscribeResponse, c.counted(c.subscribe(p.Body)))
	case UnsubscribeRequest:
		c.reply(p, UnsubscribeResponse, c.counted(c.unsubscribe(p.Body)))
	case ListenRequest:
		c.listening.Store(true)
		c.reply(p, ListenResponse, nil)
	case AsyncMessageToServer, BroadcastMessageToServer:
		err := c.s.publish(context.Background(), p, c.grant.Load())
		if err == nil {
			c.s.st.AddPublished(1)
		}
		c.reply(p, responses[cmd], c.counted(err))
	case RequestToServer:
		c.request(p)
	case ResponseToServer:
		c.respond(p)
	case AsyncMessageToClientAck, BroadcastMessageToClientAck, RequestToClientAck, ResponseToClientAck,
		ServerGoodbyeResponse, HeartbeatResponse:
		// Acknowledgements need no answer.
	default:
		c.s.st.Reject(RejectCommand)
		c.s.log.Debug("meshmessage: command not served", "cmd", cmd)
	}
}

// counted counts a failed request's refusal and returns err.
func (c *conn) counted(err error) error {
	if err != nil {
		c.s.st.Reject(rejectReason(err))
	}
	return err
}

// hello answers HELLO_REQUEST: with tokens required, the UserAgent's
// token must be known, else the client gets CodeACLFail and its
// connection is closed, as the reference closes a session whose HELLO
// fails. false ends the reading.
func (c *conn) hello(p *Package) bool {
	var ua UserAgent
	if len(p.Body) > 0 {
		if err := json.Unmarshal(p.Body, &ua); err != nil {
			c.s.st.Reject(RejectMalformed)
			c.writeNow(&Package{Header: Header{Command: HelloResponse, Seq: p.Header.Seq, Code: CodeFail,
				Desc: fmt.Sprintf("%v: user agent: %v", ErrBadMessage, err)}})
			c.end(CloseBadPackage)
			return false
		}
	}
	var gr *mesh.Grant
	if ts := c.s.tokens.Load(); ts.Required() {
		tok := ua.Token
		if tok == "" {
			tok = ua.Password
		}
		if gr = ts.Lookup(tok); gr == nil {
			c.s.st.Reject(RejectUnauthorized)
			c.writeNow(&Package{Header: Header{Command: HelloResponse, Seq: p.Header.Seq, Code: CodeACLFail,
				Desc: ErrUnauthorized.Error()}})
			c.end(CloseUnauthorized)
			return false
		}
	}
	c.grant.Store(gr)
	c.greeted.Store(true)
	c.s.log.Debug("meshmessage: hello", "remote", c.nc.RemoteAddr(), "subsystem", ua.Subsystem, "group", ua.Group, "purpose", ua.Purpose)
	c.reply(p, HelloResponse, nil)
	return true
}
