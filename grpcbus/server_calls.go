package grpcbus

import (
	"context"
	"time"

	"github.com/rsbd/rsbd/proto/grpcbuspb"
)

// running is a call a server runs: a unary call or a stream's handler.
// An acknowledged unary call is watched: its caller pings the server's
// endpoint while it waits, and a caller silent for its ping timeout has
// gone, so the handler's context is cancelled. Fields are under the
// Server's mu.
type running struct {
	cancel context.CancelFunc
	// from, for a watched call, is the caller's endpoint; empty otherwise.
	from    string
	timeout time.Duration // how long the caller may be silent
	since   time.Time     // when the call was acknowledged
	lost    bool          // cancelled for its caller's silence
}

// caller is an endpoint with watched calls: how many, and when it last
// pinged. Under the Server's mu.
type caller struct {
	calls int
	heard time.Time
}

// trackCall records a running call so a CANCEL, or its caller's silence,
// can reach it; false when MaxCalls are running.
func (sv *Server) trackCall(rq *request) bool {
	r := &running{cancel: rq.cancel}
	infos := rq.ev.MetaData.UserInfos
	if _, ack := userInfo(infos, keyAck); ack && rq.svc.unary[rq.action] != nil {
		r.from, r.timeout, r.since = rq.from, sv.pingTimeout(infos), time.Now()
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if len(sv.calls) >= sv.o.cfg.MaxCalls {
		return false
	}
	sv.calls[rq.key] = r
	if r.from != "" {
		c := sv.callers[r.from]
		if c == nil {
			c = &caller{}
			sv.callers[r.from] = c
		}
		c.calls++
	}
	return true
}

func (sv *Server) untrackCall(rq *request) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	r := sv.calls[rq.key]
	if r == nil {
		return
	}
	delete(sv.calls, rq.key)
	if c := sv.callers[r.from]; c != nil {
		if c.calls--; c.calls == 0 {
			delete(sv.callers, r.from)
		}
	}
}

// cancelCall cancels the handler's context of a running call.
func (sv *Server) cancelCall(key string) {
	sv.mu.Lock()
	r := sv.calls[key]
	sv.mu.Unlock()
	if r != nil {
		r.cancel()
	}
}

// watchCallers cancels the watched calls whose caller has sent nothing
// (the request, or a ping since) for its ping timeout. It runs on the
// endpoint's goroutine.
func (sv *Server) watchCallers(now time.Time) {
	var gone []*running
	sv.mu.Lock()
	for _, r := range sv.calls {
		if r.from == "" || r.lost {
			continue
		}
		heard := r.since
		if c := sv.callers[r.from]; c != nil && c.heard.After(heard) {
			heard = c.heard
		}
		if now.Sub(heard) > r.timeout {
			r.lost = true
			gone = append(gone, r)
		}
	}
	sv.mu.Unlock()
	for _, r := range gone {
		sv.met.missedBeat()
		sv.o.cfg.Logger.Debug("grpcbus: caller silent, cancelling its call", "caller", r.from, "silent", r.timeout)
		r.cancel()
	}
}

// onPing answers a client's ping; its streams and watched calls are
// alive.
func (sv *Server) onPing(from string, p *grpcbuspb.Ping) {
	sv.ep.heard(from)
	if p.Ack {
		return
	}
	sv.mu.Lock()
	if c := sv.callers[from]; c != nil {
		c.heard = time.Now()
	}
	sv.mu.Unlock()
	sv.ep.ping(from, p.Data, true)
}
