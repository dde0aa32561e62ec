package meshmessage

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh/frame"
	"github.com/rsbd/rsbd/scope"
)

// serveMethod starts the RSB server of a SYNC subscription: the topic
// names the method (splitMethod), and each call of it reaches the client
// as REQUEST_TO_CLIENT, whose RESPONSE_TO_SERVER becomes the call's
// reply; c.mu is held.
func (c *conn) serveMethod(sc scope.Scope) (*client.LocalServer, error) {
	srvScope, method, err := splitMethod(sc)
	if err != nil {
		return nil, err
	}
	srv, err := c.s.bus.NewLocalServer(srvScope)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBus, err)
	}
	if err := srv.AddMethod(method, c.forward); err != nil {
		_ = srv.Close()
		return nil, fmt.Errorf("%w: %w", ErrBadMessage, err)
	}
	return srv, nil
}

// forward is the Callback of a SYNC subscription's method: it sends the
// call to the client as REQUEST_TO_CLIENT and waits, at most the request
// timeout, for the client's RESPONSE_TO_SERVER, whose body is the result.
// A response with a failure code is an error reply carrying its desc.
func (c *conn) forward(ctx context.Context, req *client.Event) (any, error) {
	f, err := frame.FromRSB(&req.Event)
	if err != nil {
		c.s.st.AddDropped(DropUnmappable, 1)
		return nil, err
	}
	seq := "rsbd-" + strconv.FormatUint(c.seq.Add(1), 10)
	f.Set(AttrCorrelationID, seq)
	p, err := FramePackage(f, RequestToClient, seq)
	if err != nil {
		c.s.st.AddDropped(DropUnmappable, 1)
		return nil, err
	}
	ch, err := c.expect(seq)
	if err != nil {
		c.s.st.Reject(RejectRequests)
		return nil, err
	}
	defer c.forget(seq)
	if !c.send(p) {
		c.s.st.AddDropped(DropQueueFull, 1)
		return nil, fmt.Errorf("%w: the client's queue is full or it has gone", ErrNoResponse)
	}
	ctx, cancel := context.WithTimeout(ctx, c.s.cfg.RequestTimeout)
	defer cancel()
	select {
	case rsp := <-ch:
		return responseResult(rsp)
	case <-c.done:
		return nil, fmt.Errorf("%w: the client has gone", ErrNoResponse)
	case <-ctx.Done():
		c.s.st.AddDropped(DropNoResponse, 1)
		return nil, fmt.Errorf("%w: after %v", ErrNoResponse, c.s.cfg.RequestTimeout)
	}
}

// responseResult returns the result of a RESPONSE_TO_SERVER: its
// message's body, or an error for a failure code or a body that is no
// message.
func responseResult(rsp *Package) (any, error) {
	if rsp.Header.Code != CodeSuccess {
		return nil, fmt.Errorf("%w: code %d: %s", ErrClientFailed, rsp.Header.Code, rsp.Header.Desc)
	}
	f, err := PackageFrame(rsp)
	if err != nil {
		return nil, err
	}
	return string(f.Data), nil
}

// expect registers a REQUEST_TO_CLIENT waiting for its response, at most
// MaxRequests at once.
func (c *conn) expect(seq string) (chan *Package, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) >= c.s.cfg.MaxRequests {
		return nil, fmt.Errorf("%w: %d", ErrTooManyRequests, c.s.cfg.MaxRequests)
	}
	ch := make(chan *Package, 1)
	c.pending[seq] = ch
	return ch, nil
}

// forget drops a REQUEST_TO_CLIENT answered or abandoned.
func (c *conn) forget(seq string) {
	c.mu.Lock()
	delete(c.pending, seq)
	c.mu.Unlock()
}

// respond hands a RESPONSE_TO_SERVER to the REQUEST_TO_CLIENT it
// answers: the one with the header's seq, or else the one its message's
// emcorrelationid names. One answering none is counted and dropped; the
// reference sends nothing back for it.
func (c *conn) respond(p *Package) {
	c.mu.Lock()
	ch, ok := c.pending[p.Header.Seq]
	if !ok {
		ch, ok = c.pending[correlationID(p.Body)]
	}
	c.mu.Unlock()
	if !ok {
		c.s.st.Reject(RejectUnknownResponse)
		return
	}
	select {
	case ch <- p:
	default: // answered already
		c.s.st.Reject(RejectUnknownResponse)
	}
}

// correlationID returns the emcorrelationid property of a message body,
// "" for none.
func correlationID(body []byte) string {
	var m Message
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	if id := m.Properties[AttrCorrelationID]; id != "" {
		return id
	}
	return m.Headers[AttrCorrelationID]
}

// remotes are the RSB remote servers of the scopes clients call, at most
// maxRemoteServers kept.
type remotes struct {
	bus    *client.Bus
	mu     sync.Mutex
	m      map[string]*client.RemoteServer
	closed bool
}

// get returns the remote server of sc and the function to call after the
// call: a remote server past the bound is closed then.
func (r *remotes) get(sc scope.Scope) (*client.RemoteServer, func(), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, nil, ErrClosed
	}
	if rs, ok := r.m[sc.String()]; ok {
		return rs, func() {}, nil
	}
	rs, err := r.bus.NewRemoteServer(sc, client.WithCallTimeout(MaxRequestTimeout))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errBus, err)
	}
	if len(r.m) >= maxRemoteServers {
		return rs, func() { _ = rs.Close() }, nil
	}
	r.m[sc.String()] = rs
	return rs, func() {}, nil
}

// close closes every remote server kept.
func (r *remotes) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for k, rs := range r.m {
		_ = rs.Close()
		delete(r.m, k)
	}
}
