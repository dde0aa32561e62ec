package cloudevents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/scope"
)

// CursorHeader is the response header of a long-poll that carries the
// cursor to poll with next (query parameter after).
const CursorHeader = "Rsbd-Cursor"

// poller is the subscription behind one long-poll cursor: it buffers
// what arrives between polls.
type poller struct {
	s  *subscription
	sc scope.Scope
	// pending is an event taken from the queue that did not fit the last
	// reply's byte bound; the next reply starts with it.
	pending *outgoing
	// busy is set while a poll is served; expiry spares a busy poller.
	busy  bool
	timer *time.Timer
}

// pollers are the gateway's long-poll cursors.
type pollers struct {
	mu    sync.Mutex
	once  sync.Once
	byCur map[string]*poller
}

// isPoll reports whether a GET is a long-poll: it has wait or after.
func isPoll(r *http.Request) bool {
	q := r.URL.Query()
	return q.Has("wait") || q.Has("after")
}

// servePoll serves a long-poll: it replies, as a CloudEvents batch, what
// the cursor's subscription holds, waiting up to the wait parameter for a
// first event.
func (g *Gateway) servePoll(w http.ResponseWriter, r *http.Request, sc scope.Scope) {
	q := r.URL.Query()
	wait := time.Duration(0)
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > maxPollWait {
			g.fail(w, http.StatusBadRequest, reasonPoll, fmt.Sprintf("wait %q: want a duration from 0s to %v", v, maxPollWait))
			return
		}
		wait = d
	}
	cur, p, ok := g.takePoller(w, r, sc)
	if !ok {
		return
	}
	defer g.releasePoller(cur, p)
	body := g.pollBatch(r.Context(), p, wait)
	w.Header().Set(CursorHeader, cur)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", cloudevent.BatchMediaType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// takePoller returns the poller of the request's cursor marked busy, or a
// new one without a cursor; on failure it replies and returns false.
func (g *Gateway) takePoller(w http.ResponseWriter, r *http.Request, sc scope.Scope) (string, *poller, bool) {
	reg := &g.polls
	reg.once.Do(func() { context.AfterFunc(g.ctx, g.closePollers) })
	cur := r.URL.Query().Get("after")
	if cur == "" {
		flt, f, ok := g.subscriptionParams(w, r)
		if !ok {
			return "", nil, false
		}
		if f != formatCloudEvents {
			g.fail(w, http.StatusBadRequest, reasonOutFormat, "a long-poll replies a CloudEvents batch: format=cloudevents only")
			return "", nil, false
		}
		s, err := g.subscribe(sc, flt, f)
		if err != nil {
			g.refuse(w, err)
			return "", nil, false
		}
		var b [16]byte
		_, _ = rand.Read(b[:])
		cur = hex.EncodeToString(b[:])
		p := &poller{s: s, sc: sc, busy: true}
		reg.mu.Lock()
		if reg.byCur == nil {
			reg.byCur = make(map[string]*poller)
		}
		reg.byCur[cur] = p
		reg.mu.Unlock()
		return cur, p, true
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	p := reg.byCur[cur]
	switch {
	case p == nil:
		g.fail(w, http.StatusGone, reasonCursor, "cursor unknown or expired: poll again without after")
		return "", nil, false
	case p.sc != sc:
		g.fail(w, http.StatusBadRequest, reasonPoll, fmt.Sprintf("cursor belongs to scope %s", p.sc))
		return "", nil, false
	case p.busy:
		g.fail(w, http.StatusConflict, reasonPollBusy, "cursor is being polled")
		return "", nil, false
	}
	p.busy = true
	p.timer.Stop()
	return cur, p, true
}

// releasePoller ends a poll: the poller waits for the next one until
// pollIdle passes, or closes with the gateway.
func (g *Gateway) releasePoller(cur string, p *poller) {
	reg := &g.polls
	reg.mu.Lock()
	defer reg.mu.Unlock()
	p.busy = false
	if g.ctx.Err() != nil {
		delete(reg.byCur, cur)
		g.retirePoller(p)
		return
	}
	if p.timer == nil {
		p.timer = time.AfterFunc(pollIdle, func() { g.expirePoller(cur, p) })
	} else {
		p.timer.Reset(pollIdle)
	}
}

// expirePoller closes a poller not polled for pollIdle.
func (g *Gateway) expirePoller(cur string, p *poller) {
	reg := &g.polls
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if p.busy || reg.byCur[cur] != p {
		return
	}
	delete(reg.byCur, cur)
	g.retirePoller(p)
}

// closePollers closes every poller not being polled when the gateway
// closes; a busy one closes when its poll ends.
func (g *Gateway) closePollers() {
	reg := &g.polls
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for cur, p := range reg.byCur {
		if !p.busy {
			delete(reg.byCur, cur)
			g.retirePoller(p)
		}
	}
}

// retirePoller closes p's subscription and counts what it still held as
// dropped (reason poll_expired).
func (g *Gateway) retirePoller(p *poller) {
	if p.timer != nil {
		p.timer.Stop()
	}
	g.closeSubscription(p.s)
	n := int64(len(p.s.q))
	if p.pending != nil {
		n++
	}
	g.st.m.AddDropped(dropPollExpired, n)
}

// pollBatch waits up to wait for p's first event and returns the JSON
// batch of what p holds then, at most pollMaxEvents events and
// pollMaxBytes bytes (an event heavier than that alone goes by itself).
func (g *Gateway) pollBatch(ctx context.Context, p *poller, wait time.Duration) []byte {
	batch := []byte{'['}
	n := 0
	add := func(o outgoing) bool {
		if n > 0 && (n >= pollMaxEvents || len(batch)+len(o.json)+2 > pollMaxBytes) {
			p.pending = &o
			return false
		}
		if n > 0 {
			batch = append(batch, ',')
		}
		batch = append(batch, o.json...)
		n++
		g.st.m.AddDelivered(1)
		return true
	}
	if o := p.pending; o != nil {
		p.pending = nil
		add(*o)
	}
	if n == 0 && wait > 0 {
		t := time.NewTimer(wait)
		select {
		case o := <-p.s.q:
			add(p.s.take(o))
		case <-t.C:
		case <-ctx.Done():
		case <-g.ctx.Done():
		}
		t.Stop()
	}
	for p.pending == nil {
		select {
		case o := <-p.s.q:
			if !add(p.s.take(o)) {
				return append(batch, ']')
			}
		default:
			return append(batch, ']')
		}
	}
	return append(batch, ']')
}
