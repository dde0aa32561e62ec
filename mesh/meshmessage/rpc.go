package meshmessage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh/frame"
	"github.com/rsbd/rsbd/scope"
)

// Attributes of the request commands.
const (
	// AttrTTL names a request message's time to live in milliseconds, as
	// EventMesh clients set it; the frame's emttl is read when it is
	// absent.
	AttrTTL = "ttl"
	// AttrCorrelationID names the property of a REQUEST_TO_CLIENT message
	// holding its seq, for a response that does not repeat the header's
	// seq to name its request.
	AttrCorrelationID = "emcorrelationid"
)

// splitMethod returns the RSB server scope and method name a topic
// names: the topic /robot/arm/move/ is the method move of the server on
// /robot/arm/.
func splitMethod(sc scope.Scope) (scope.Scope, string, error) {
	comps := sc.Components()
	if len(comps) == 0 {
		return scope.Scope{}, "", fmt.Errorf("%w: the topic of a request names a method: /SERVER/METHOD/", ErrBadMessage)
	}
	srv := scope.Root
	if len(comps) > 1 {
		var err error
		if srv, err = scope.Parse("/" + strings.Join(comps[:len(comps)-1], "/") + "/"); err != nil {
			return scope.Scope{}, "", err
		}
	}
	return srv, comps[len(comps)-1], nil
}

// requestTimeout returns how long a request may wait for its answer: the
// message's ttl, or emttl, in milliseconds, at most MaxRequestTimeout;
// without either, def.
func requestTimeout(f *frame.Frame, def time.Duration) (time.Duration, error) {
	v, ok := f.Get(AttrTTL)
	if !ok {
		v, ok = f.Get(frame.AttrTTL)
	}
	if !ok {
		return def, nil
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return 0, fmt.Errorf("%w: time to live %q is not a positive number of milliseconds", ErrBadMessage, v)
	}
	return min(time.Duration(ms)*time.Millisecond, MaxRequestTimeout), nil
}

// request answers REQUEST_TO_SERVER on a goroutine of its own: the
// message's topic names an RSB method, which is called with the body; the
// reply comes back as RESPONSE_TO_CLIENT with the request's seq, a failed
// or unanswered call as RESPONSE_TO_CLIENT with a failure code.
func (c *conn) request(p *Package) {
	select {
	case c.calls <- struct{}{}:
	default:
		c.reply(p, ResponseToClient, c.counted(fmt.Errorf("%w: %d", ErrTooManyRequests, c.s.cfg.MaxRequests)))
		return
	}
	c.s.wg.Add(1)
	go func() {
		defer c.s.wg.Done()
		defer func() { <-c.calls }()
		rsp, err := c.call(p)
		if err != nil {
			if errors.Is(err, ErrNoResponse) {
				c.s.st.AddDropped(DropNoResponse, 1)
			} else if !errors.Is(err, client.ErrRemote) {
				c.s.st.Reject(rejectReason(err))
			}
			c.reply(p, ResponseToClient, err)
			return
		}
		if !c.send(rsp) && !c.ended() {
			c.s.st.AddDropped(DropQueueFull, 1)
		}
	}()
}

// call makes the RSB call of a REQUEST_TO_SERVER and returns its
// RESPONSE_TO_CLIENT.
func (c *conn) call(p *Package) (*Package, error) {
	f, err := PackageFrame(p)
	if err != nil {
		return nil, err
	}
	subject, _ := f.Get("subject")
	sc, err := scope.Parse(subject)
	if err != nil {
		return nil, fmt.Errorf("%w: topic: %w", ErrBadMessage, err)
	}
	srv, method, err := splitMethod(sc)
	if err != nil {
		return nil, err
	}
	if !c.grant.Load().MayPublish(sc) {
		return nil, fmt.Errorf("%w: %s", ErrForbidden, sc)
	}
	timeout, err := requestTimeout(f, c.s.cfg.RequestTimeout)
	if err != nil {
		return nil, err
	}
	rs, release, err := c.s.remotes.get(srv)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	rep, err := rs.CallEvent(ctx, method, string(f.Data))
	switch {
	case errors.Is(err, client.ErrTimeout):
		return nil, fmt.Errorf("%w: %s after %v", ErrNoResponse, sc, timeout)
	case errors.Is(err, client.ErrRemote):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%w: %w", errBus, err)
	}
	rf, err := frame.FromRSB(&rep.Event)
	if err != nil {
		return nil, fmt.Errorf("%w: the reply: %w", ErrBadMessage, err)
	}
	return FramePackage(rf, ResponseToClient, p.Header.Seq)
}
