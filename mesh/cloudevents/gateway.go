package cloudevents

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/scope"
)

// Gateway serves CloudEvents over HTTP, SSE and WebSocket on a bus (see
// the package documentation). It is an http.Handler, safe for concurrent
// use.
type Gateway struct {
	bus *client.Bus
	cfg Config
	log *slog.Logger
	// inf publishes every event the gateway receives, on its subject.
	inf *client.Informer
	// ctx ends with Close, and with it every subscription.
	ctx    context.Context
	cancel context.CancelFunc
	// tokens are the bearer tokens requests need; none: no check.
	tokens atomic.Pointer[mesh.Tokens]
	// subs counts the subscriptions being served, for Close to wait on.
	subs sync.WaitGroup
	st   counters
	// hooks are the webhooks created over HTTP (webhookapi.go).
	hooks hookRegistry
	// polls are the long-poll cursors (poll.go).
	polls pollers
}

// New returns a Gateway publishing and subscribing through bus, which the
// caller keeps and closes after the Gateway.
func New(bus *client.Bus, cfg Config) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	inf, err := bus.NewInformer(scope.Root)
	if err != nil {
		return nil, fmt.Errorf("cloudevents: informer: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{bus: bus, cfg: cfg, log: cfg.Logger, inf: inf, ctx: ctx, cancel: cancel}
	g.st.m = newMeshCounters()
	if err := g.SetTokens(cfg.Tokens); err != nil {
		cancel()
		_ = inf.Close()
		return nil, err
	}
	return g, nil
}

// Close ends every subscription, waits for their handlers to return and
// retires the gateway's informer. Requests after Close get 503.
func (g *Gateway) Close() error {
	g.cancel()
	g.subs.Wait()
	return g.inf.Close()
}

// ServeHTTP serves one request; the path is the scope.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.ctx.Err() != nil {
		g.fail(w, http.StatusServiceUnavailable, reasonClosed, "gateway closed")
		return
	}
	if strings.HasPrefix(r.URL.Path, AdminPrefix) {
		g.serveAdmin(w, r)
		return
	}
	sc, err := scope.Parse(r.URL.Path)
	if err != nil {
		g.fail(w, http.StatusBadRequest, reasonScope, err.Error())
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodPost {
		if r = g.authorize(w, r, sc); r == nil {
			return
		}
	}
	switch r.Method {
	case http.MethodPost:
		g.publish(w, r, sc)
	case http.MethodGet:
		if isUpgrade(r) {
			g.serveWebSocket(w, r, sc)
		} else if isPoll(r) {
			g.servePoll(w, r, sc)
		} else {
			g.serveSSE(w, r, sc)
		}
	default:
		w.Header().Set("Allow", "GET, POST")
		g.fail(w, http.StatusMethodNotAllowed, reasonMethod, r.Method+" not allowed")
	}
}

// isUpgrade reports whether r asks for a WebSocket.
func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// fail replies status with a JSON error message and counts the refusal.
func (g *Gateway) fail(w http.ResponseWriter, status int, why reason, msg string) {
	g.reject(why)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}{msg, why.String()})
	_, _ = w.Write(append(b, '\n'))
}

// reason names why the gateway refused a request or a message; Stats
// counts refusals by reason. Values: append only.
type reason int

// The reasons.
const (
	reasonScope       reason = iota // the path is not a scope
	reasonMethod                    // neither GET nor POST
	reasonBody                      // the body could not be read whole
	reasonTooLarge                  // the body or an event is over a limit
	reasonFormat                    // a CloudEvents format other than JSON
	reasonMalformed                 // not a valid CloudEvent
	reasonSubject                   // the subject is not within the path's scope
	reasonBus                       // the bus refused the publish
	reasonSubprotocol               // a WebSocket without cloudevents.json
	reasonClosed                    // the gateway is closed
	reasonSubscribers               // MaxSubscribers reached
	reasonFilter                    // a subscription's filter does not parse
	reasonNoToken                   // no bearer token, or an unknown one
	reasonForbidden                 // a token used outside its scope prefixes
	reasonOutFormat                 // a subscription's format is neither cloudevents nor raw
	reasonWebhook                   // a malformed webhook request
	reasonWebhooks                  // the webhooks created over HTTP are at their bound
	reasonNotFound                  // no such webhook or gateway path
	reasonPoll                      // a long-poll's wait or scope is invalid
	reasonCursor                    // a long-poll's cursor is unknown or expired
	reasonPollBusy                  // a long-poll's cursor is being polled already
	numReasons
)

// String returns the reason's label.
func (r reason) String() string {
	return [...]string{"scope", "method", "body", "too_large", "format", "malformed", "subject",
		"bus", "subprotocol", "closed", "subscribers", "filter", "unauthorized", "forbidden",
		"out_format", "webhook", "webhooks", "not_found", "poll", "cursor", "poll_busy"}[r]
}

// RejectReasons returns the reason labels of Stats.Rejected, the fixed set
// a metric may label refusals with.
func RejectReasons() []string {
	out := make([]string, numReasons)
	for r := range numReasons {
		out[r] = r.String()
	}
	return out
}

// Drop reasons of the gateway's mesh.Counters.
const (
	dropQueueFull   = "queue_full"   // a subscriber's queue was full
	dropUnmappable  = "unmappable"   // no CloudEvent can carry the event
	dropExpired     = "expired"      // past its time to live
	dropPollExpired = "poll_expired" // held by a long-poll cursor that expired
)

// counters are the gateway's statistics: the shared ones of every
// listener in m, the gateway's own beside them.
type counters struct {
	m *mesh.Counters
	// subscribers counts the subscriptions from their request on, for the
	// MaxSubscribers bound; m counts them only once their handler is in
	// place, so that an event published then reaches them.
	subscribers atomic.Int64
	// webhooksEnded counts the webhooks their target ended, by reason.
	webhooksEnded [numEndReasons]atomic.Int64
}

// newMeshCounters returns zeroed shared counters with the gateway's
// reason sets.
func newMeshCounters() *mesh.Counters {
	return mesh.NewCounters(Protocol, mesh.Reasons{
		Dropped:  []string{dropQueueFull, dropUnmappable, dropExpired, dropPollExpired},
		Rejected: RejectReasons(),
	})
}

// reject counts a refusal for why.
func (g *Gateway) reject(why reason) { g.st.m.Reject(why.String()) }

// Counters returns the gateway's counters in the shape every listener
// shares, for the daemon's rsbd_gateway_* metrics.
func (g *Gateway) Counters() *mesh.Counters { return g.st.m }

// Stats counts what a Gateway did.
type Stats struct {
	// Published counts events published to the bus.
	Published int64
	// Rejected counts refused requests and WebSocket messages by reason
	// label (scope, method, body, too_large, format, malformed, subject,
	// bus, subprotocol, closed, subscribers, filter, unauthorized,
	// forbidden, out_format, webhook, webhooks, not_found, poll, cursor,
	// poll_busy).
	Rejected map[string]int64
	// Subscribers is the number of SSE and WebSocket subscriptions open.
	Subscribers int64
	// Delivered counts events written to subscribers.
	Delivered int64
	// Dropped counts events lost to a subscriber's full queue.
	Dropped int64
	// Unmappable counts received events no CloudEvent can carry (see
	// cloudevent.FromRSB), not delivered.
	Unmappable int64
	// Expired counts events past their time to live (emttl, or a
	// malformed one), neither published nor delivered.
	Expired int64
	// PollExpired counts events a long-poll cursor still held when it
	// expired unpolled or the gateway closed, not delivered.
	PollExpired int64
	// WebhooksEnded counts the webhooks their target ended, by reason
	// label (gone: it answered 410; refused: its validation handshake did
	// not allow the gateway's origin; unvalidated: it never answered the
	// handshake).
	WebhooksEnded map[string]int64
}

// Stats returns the gateway's counters.
func (g *Gateway) Stats() Stats {
	m := g.st.m.Stats()
	s := Stats{
		Published: m.Published, Subscribers: m.Subscribers, Delivered: m.Delivered,
		Dropped: m.Dropped[dropQueueFull], Unmappable: m.Dropped[dropUnmappable], Expired: m.Dropped[dropExpired],
		PollExpired: m.Dropped[dropPollExpired], Rejected: make(map[string]int64),
		WebhooksEnded: make(map[string]int64),
	}
	for r := range numEndReasons {
		if n := g.st.webhooksEnded[r].Load(); n > 0 {
			s.WebhooksEnded[r.String()] = n
		}
	}
	for r, n := range m.Rejected {
		if n > 0 {
			s.Rejected[r] = n
		}
	}
	return s
}
