package main

import (
	"slices"
	"strings"

	"github.com/rsbd/rsbd/cloudevent/filter"
	"github.com/rsbd/rsbd/mesh/cloudevents"
)

// keyGatewayWebhook is the section of the webhooks the daemon starts with
// its gateway, one subsection a webhook:
//
//	[rsbd.gateway.webhook.arm]
//	scope      = /robot/arm/
//	url        = https://hooks.example/arm
//	filter     = {"prefix":{"type":"com.example."}}
//	deadletter = /dead/
//	validate   = false
//
// The subsection is the webhook's name (spelled as keys are: "arm-1" is
// "arm.1"); the environment sets them as RSB_RSBD_GATEWAY_WEBHOOK_ARM_URL.
const keyGatewayWebhook = "rsbd.gateway.webhook"

// The keys of one webhook, the last part of its keys.
const (
	hookScope      = "scope"      // scope subscribed to (required)
	hookURL        = "url"        // target URL (required)
	hookFilter     = "filter"     // CloudEvents Subscriptions API filter, JSON
	hookDeadLetter = "deadletter" // scope of the events that never got through
	hookValidate   = "validate"   // false skips the validation handshake
)

// hookKeys lists the keys of a webhook, for the error naming them.
var hookKeys = []string{hookScope, hookURL, hookFilter, hookDeadLetter, hookValidate}

// namedWebhook is a webhook of the configuration and its name.
type namedWebhook struct {
	name string
	cfg  cloudevents.WebhookConfig
}

// gatewayWebhooks reads the webhooks of the keyGatewayWebhook section,
// sorted by name, each checked as AddWebhook will check it. Webhooks
// without a gateway to run them are an error, not silently idle.
func (r *reader) gatewayWebhooks(gatewayAddr string) []namedWebhook {
	byName := map[string]*namedWebhook{}
	var names []string
	for _, k := range r.c.Keys() {
		rest, ok := strings.CutPrefix(k, keyGatewayWebhook+".")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '.')
		field := rest[i+1:]
		if i <= 0 || !slices.Contains(hookKeys, field) {
			r.fail(k, keyGatewayWebhook+".NAME."+strings.Join(hookKeys, "|"), nil)
			continue
		}
		name := rest[:i]
		h := byName[name]
		if h == nil {
			h = &namedWebhook{name: name}
			byName[name] = h
			names = append(names, name)
		}
		v := strings.TrimSpace(r.c.String(k, ""))
		switch field {
		case hookScope:
			h.cfg.Scope = v
		case hookURL:
			h.cfg.URL = v
		case hookFilter:
			h.cfg.Filter = v
		case hookDeadLetter:
			h.cfg.DeadLetter = v
		case hookValidate:
			validate, err := r.c.Bool(k, true)
			if err != nil {
				r.errs = append(r.errs, err)
			}
			h.cfg.SkipValidation = !validate
		}
	}
	slices.Sort(names)
	out := make([]namedWebhook, 0, len(names))
	for _, name := range names {
		h := byName[name]
		prefix := keyGatewayWebhook + "." + name + "."
		switch {
		case h.cfg.Scope == "":
			r.fail(prefix+hookScope, "the scope of webhook "+name, nil)
		case h.cfg.URL == "":
			r.fail(prefix+hookURL, "the URL of webhook "+name, nil)
		case gatewayAddr == "":
			r.fail(prefix+hookURL, "no webhook without "+keyGatewayHTTP+" (webhooks run in the gateway)", nil)
		case filterErr(h.cfg.Filter) != nil:
			r.fail(prefix+hookFilter, "a CloudEvents Subscriptions API filter (JSON)", filterErr(h.cfg.Filter))
		default:
			if err := h.cfg.Validate(); err != nil {
				r.fail(prefix+hookURL, "a valid webhook "+name, err)
				continue
			}
			out = append(out, *h)
		}
	}
	return out
}

// filterErr returns why f is no filter, so that the error names the filter
// key rather than the webhook as a whole.
func filterErr(f string) error {
	_, err := filter.Parse([]byte(f))
	return err
}
