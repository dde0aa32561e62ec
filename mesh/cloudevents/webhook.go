package cloudevents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/cloudevent/filter"
	"github.com/rsbd/rsbd/scope"
)

// ErrWebhookGone: the target answered 410 Gone; the webhook stopped.
var ErrWebhookGone = errors.New("cloudevents: webhook target gone")

// WebhookConfig configures a webhook subscription: the events on Scope
// (and its sub-scopes) that pass Filter are POSTed to URL one at a time, in
// structured mode, at least once.
type WebhookConfig struct {
	// Scope is the scope subscribed to. Required.
	Scope string
	// URL is the target, http or https. Required.
	URL string
	// Filter is a filter list (package cloudevent/filter); empty passes
	// every event.
	Filter string
	// MaxAttempts bounds the deliveries tried per event
	// (DefaultWebhookAttempts).
	MaxAttempts int
	// Backoff is the wait after the first failed attempt, doubled after
	// each further one up to MaxBackoff (DefaultWebhookBackoff).
	Backoff time.Duration
	// MaxBackoff bounds a wait between attempts, a 429's Retry-After
	// included (DefaultWebhookMaxBackoff).
	MaxBackoff time.Duration
	// Timeout bounds one attempt (DefaultWebhookTimeout).
	Timeout time.Duration
	// DeadLetter is the scope an event that never got through is published
	// on, with the user info "rsbd:webhook-error" saying why; empty drops
	// it (counted).
	DeadLetter string
	// Origin is the WebHook-Request-Origin of the validation handshake,
	// the name the target knows the gateway by (default: the host name).
	Origin string
	// SkipValidation delivers without the validation handshake, for
	// targets that do not implement it. The default (false) validates,
	// as the CloudEvents HTTP Web Hooks spec's abuse protection asks:
	// whoever can create a webhook must not be able to point the gateway's
	// POSTs at a URL that never agreed to receive them.
	SkipValidation bool
}

// withDefaults checks c and fills its zero fields.
func (c WebhookConfig) withDefaults() (WebhookConfig, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("%w: webhook URL %q is not an http(s) URL", ErrConfig, c.URL)
	}
	if c.MaxAttempts < 0 || c.Backoff < 0 || c.MaxBackoff < 0 || c.Timeout < 0 {
		return c, fmt.Errorf("%w: negative webhook bound", ErrConfig)
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultWebhookAttempts
	}
	if c.Backoff == 0 {
		c.Backoff = DefaultWebhookBackoff
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultWebhookMaxBackoff
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultWebhookTimeout
	}
	if c.Origin == "" {
		c.Origin = defaultOrigin()
	}
	return c, nil
}

// Validate reports what AddWebhook would refuse in c (wrapping
// ErrConfig), without a gateway: a configuration is checked before the
// gateway starts.
func (c WebhookConfig) Validate() error {
	c, err := c.withDefaults()
	if err == nil {
		_, _, _, err = c.parse()
	}
	return err
}

// parse parses c's scope, dead-letter scope (zero without one) and filter.
func (c WebhookConfig) parse() (sc, dead scope.Scope, flt filter.Filter, err error) {
	if sc, err = scope.Parse(c.Scope); err != nil {
		return sc, dead, flt, fmt.Errorf("%w: webhook scope: %w", ErrConfig, err)
	}
	if c.DeadLetter != "" {
		if dead, err = scope.Parse(c.DeadLetter); err != nil {
			return sc, dead, flt, fmt.Errorf("%w: dead-letter scope: %w", ErrConfig, err)
		}
		if sc.Contains(dead) {
			return sc, dead, flt, fmt.Errorf("%w: dead-letter scope %s lies within the webhook's scope %s", ErrConfig, dead, sc)
		}
	}
	if flt, err = filter.Parse([]byte(c.Filter)); err != nil {
		return sc, dead, flt, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return sc, dead, flt, nil
}

// WebhookStats counts what a webhook did.
type WebhookStats struct {
	// Delivered counts events the target accepted.
	Delivered int64
	// Retries counts attempts after an event's first.
	Retries int64
	// DeadLettered counts events given up on (published on the dead-letter
	// scope, or dropped without one).
	DeadLettered int64
}

// Webhook is a running webhook subscription.
type Webhook struct {
	g            *Gateway
	cfg          WebhookConfig
	sub          *subscription
	dead         scope.Scope
	client       *http.Client
	ctx          context.Context
	cancel       context.CancelFunc
	done         chan struct{}
	err          atomic.Pointer[error]
	delivered    atomic.Int64
	retries      atomic.Int64
	deadLettered atomic.Int64
}

// AddWebhook starts a webhook subscription on the gateway's bus; it ends
// with Close, with the gateway's Close, or when the target answers 410.
func (g *Gateway) AddWebhook(cfg WebhookConfig) (*Webhook, error) {
	if g.ctx.Err() != nil {
		return nil, fmt.Errorf("cloudevents: webhook: %w", client.ErrClosed)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	sc, dead, flt, err := cfg.parse()
	if err != nil {
		return nil, err
	}
	sub, err := g.subscribe(sc, flt, formatCloudEvents)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(g.ctx)
	w := &Webhook{g: g, cfg: cfg, sub: sub, dead: dead, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		client: &http.Client{Timeout: cfg.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a webhook must not follow redirects
		}}}
	go w.run()
	return w, nil
}

// Close stops the webhook; an event being delivered is abandoned. It
// returns ErrWebhookGone (wrapped) if the target ended it.
func (w *Webhook) Close() error {
	w.cancel()
	<-w.done
	if err := w.err.Load(); err != nil {
		return *err
	}
	return nil
}

// Err returns why the target ended the webhook (wrapping ErrWebhookGone,
// ErrWebhookRefused or ErrWebhookUnvalidated), nil while it runs or when
// it was closed.
func (w *Webhook) Err() error {
	if err := w.err.Load(); err != nil {
		return *err
	}
	return nil
}

// Stats returns the webhook's counters.
func (w *Webhook) Stats() WebhookStats {
	return WebhookStats{Delivered: w.delivered.Load(), Retries: w.retries.Load(), DeadLettered: w.deadLettered.Load()}
}

// run validates the target (unless configured not to), then delivers
// queued events one at a time until the webhook ends, then closes its
// subscription. Events arriving during the handshake wait in the queue.
func (w *Webhook) run() {
	defer close(w.done)
	defer w.g.closeSubscription(w.sub)
	if !w.cfg.SkipValidation {
		if err := w.validate(); err != nil {
			if w.ctx.Err() == nil {
				w.end(err)
			}
			return
		}
	}
	for {
		select {
		case <-w.ctx.Done():
			return
		case o := <-w.sub.q:
			if err := w.deliver(w.sub.take(o)); errors.Is(err, ErrWebhookGone) {
				w.end(err)
				return
			}
		}
	}
}

// end stops the webhook for err, which the target caused: it is counted
// by reason, logged, and returned by Close.
func (w *Webhook) end(err error) {
	why := endGone
	switch {
	case errors.Is(err, ErrWebhookRefused):
		why = endRefused
	case errors.Is(err, ErrWebhookUnvalidated):
		why = endUnvalidated
	}
	w.g.st.webhooksEnded[why].Add(1)
	w.g.log.Warn("cloudevents: webhook ended", "url", w.cfg.URL, "scope", w.cfg.Scope, "reason", why.String(), "err", err)
	w.err.Store(&err)
	w.cancel()
}

// wait waits d, or less if the webhook ends; it reports whether the
// webhook goes on.
func (w *Webhook) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// deliver tries o until the target accepts it, it gives up (dead letter)
// or the webhook ends.
func (w *Webhook) deliver(o outgoing) error {
	wait := w.cfg.Backoff
	var last error
	for attempt := range w.cfg.MaxAttempts {
		if attempt > 0 {
			w.retries.Add(1)
		}
		retryAfter, err := w.post(o)
		if err == nil {
			w.delivered.Add(1)
			return nil
		}
		if errors.Is(err, ErrWebhookGone) || w.ctx.Err() != nil {
			return err
		}
		last = err
		if attempt == w.cfg.MaxAttempts-1 {
			break
		}
		d := min(max(wait, retryAfter), w.cfg.MaxBackoff)
		wait = min(2*wait, w.cfg.MaxBackoff)
		if !w.wait(d) {
			return w.ctx.Err()
		}
	}
	w.deadLetter(o, last)
	return last
}

// post makes one delivery attempt. It returns the wait a 429 asks for.
func (w *Webhook) post(o outgoing) (time.Duration, error) {
	req, err := http.NewRequestWithContext(w.ctx, http.MethodPost, w.cfg.URL, bytes.NewReader(o.json))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", cloudevent.MediaType)
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusCreated, http.StatusAccepted, http.StatusNoContent:
		return 0, nil
	case http.StatusGone:
		return 0, fmt.Errorf("%w: %s", ErrWebhookGone, w.cfg.URL)
	case http.StatusTooManyRequests:
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return time.Duration(max(secs, 0)) * time.Second, fmt.Errorf("target answered %s", resp.Status)
	}
	return 0, fmt.Errorf("target answered %s", resp.Status)
}

// deadLetter publishes the event that never got through on the dead-letter
// scope, or counts it dropped without one.
func (w *Webhook) deadLetter(o outgoing, why error) {
	w.deadLettered.Add(1)
	if w.dead.IsZero() {
		return
	}
	ce, err := cloudevent.Unmarshal(o.json)
	if err != nil {
		return
	}
	ev, err := ce.ToRSB()
	if err != nil {
		return
	}
	ev.Scope = w.dead
	ev.MetaData.SetUserInfo("rsbd:webhook-error", why.Error())
	cev := &client.Event{Event: *ev}
	if cev.WireSchema == "" && len(cev.Data) == 0 {
		cev.Data = nil
	}
	if err := w.g.inf.PublishEvent(w.ctx, cev); err != nil {
		w.g.log.Warn("cloudevents: dead letter not published", "scope", w.dead, "err", err)
	}
}
