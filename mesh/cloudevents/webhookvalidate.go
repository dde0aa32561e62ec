package cloudevents

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// Errors that end a webhook at its validation handshake.
var (
	// ErrWebhookRefused: the target answered the validation handshake
	// without allowing the gateway's origin; the webhook stopped before
	// delivering anything.
	ErrWebhookRefused = errors.New("cloudevents: webhook target refused the validation handshake")
	// ErrWebhookUnvalidated: the target did not answer the validation
	// handshake within the webhook's attempts; the webhook stopped before
	// delivering anything.
	ErrWebhookUnvalidated = errors.New("cloudevents: webhook target did not answer the validation handshake")
)

// Headers of the validation handshake (CloudEvents HTTP Web Hooks, abuse
// protection).
const (
	headerRequestOrigin = "WebHook-Request-Origin"
	headerAllowedOrigin = "WebHook-Allowed-Origin"
)

// endReason names why a webhook ended by its target's doing; Stats
// counts the endings by reason. Values: append only.
type endReason int

// The reasons a webhook ends.
const (
	endGone        endReason = iota // the target answered 410 Gone
	endRefused                      // the handshake's answer did not allow the origin
	endUnvalidated                  // the handshake got no usable answer in MaxAttempts
	numEndReasons
)

// String returns the reason's label.
func (r endReason) String() string {
	return [...]string{"gone", "refused", "unvalidated"}[r]
}

// WebhookEndReasons returns the reason labels of Stats.WebhooksEnded, the
// fixed set a metric may label endings with.
func WebhookEndReasons() []string {
	out := make([]string, numEndReasons)
	for r := range numEndReasons {
		out[r] = r.String()
	}
	return out
}

// defaultOrigin returns the origin a webhook announces when its config
// names none: the host name, which is what a target's allow list would
// hold, or fallbackOrigin without one.
func defaultOrigin() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return fallbackOrigin
}

// validate runs the validation handshake: an OPTIONS request with the
// webhook's origin, until the target answers it. An answer allowing the
// origin (or any, "*") lets deliveries start; a 2xx without it, or a 4xx
// other than 429, is a refusal; failures to connect, 5xx and 429 are tried
// again as deliveries are, and after MaxAttempts the target counts as
// unvalidated.
func (w *Webhook) validate() error {
	wait := w.cfg.Backoff
	var last error
	for attempt := range w.cfg.MaxAttempts {
		if attempt > 0 && !w.wait(wait) {
			return w.ctx.Err()
		}
		wait = min(2*wait, w.cfg.MaxBackoff)
		allowed, err := w.options()
		switch {
		case err == nil && allowed:
			return nil
		case err == nil:
			return fmt.Errorf("%w: %s does not allow origin %q", ErrWebhookRefused, w.cfg.URL, w.cfg.Origin)
		case errors.Is(err, ErrWebhookRefused) || w.ctx.Err() != nil:
			return err
		}
		last = err
	}
	return fmt.Errorf("%w: %s: %w", ErrWebhookUnvalidated, w.cfg.URL, last)
}

// options sends one validation request and reports whether its answer
// allows the webhook's origin. A refusing status is ErrWebhookRefused; an
// error otherwise is worth trying again.
func (w *Webhook) options() (bool, error) {
	req, err := http.NewRequestWithContext(w.ctx, http.MethodOptions, w.cfg.URL, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set(headerRequestOrigin, w.cfg.Origin)
	resp, err := w.client.Do(req)
	if err != nil {
		return false, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return false, fmt.Errorf("validation answered %s", resp.Status)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return false, fmt.Errorf("%w: %s answered %s", ErrWebhookRefused, w.cfg.URL, resp.Status)
	}
	for _, v := range resp.Header.Values(headerAllowedOrigin) {
		for _, o := range strings.Split(v, ",") {
			if o = strings.TrimSpace(o); o == "*" || strings.EqualFold(o, w.cfg.Origin) {
				return true, nil
			}
		}
	}
	return false, nil
}
