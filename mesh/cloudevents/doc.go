// Package cloudevents is the mesh gateway's CloudEvents adaptor: web
// clients publish to and subscribe from RSB scopes over HTTP without
// speaking RSB.
//
// A Gateway is an http.Handler on a client.Bus (embedded in a node, or
// over the socket transport): a participant of the bus like any other.
// The request path is the scope.
//
//   - POST publishes. The Content-Type chooses the HTTP binding's mode:
//     application/cloudevents+json is one structured event,
//     application/cloudevents-batch+json a batch, anything else binary
//     mode (attributes in ce-* headers, datacontenttype in Content-Type,
//     the body is data). An event's subject, when it has one, must be the
//     path's scope or a sub-scope of it, and is where it is published; an
//     event without one is published on the path's scope. The reply is
//     202 with the ids of the events accepted ({"accepted":[{"id":…,
//     "rsbid":…}]}); malformed input gets 400, an oversize body 413, a
//     CloudEvents format other than JSON 415, each with a message and
//     counted by reason (Stats).
//   - GET subscribes to the scope and its sub-scopes: with a WebSocket
//     upgrade (subprotocol cloudevents.json, one structured event per text
//     message; text messages the client sends are published as POST would
//     publish them), otherwise as Server-Sent Events (one structured event
//     per event, its id as the SSE id). The query parameter filter takes a
//     filter list of the CloudEvents Subscriptions API (package
//     cloudevent/filter: exact, prefix, suffix, all, any, not), evaluated
//     before an event is queued; one that does not parse gets 400.
//   - The query parameter format chooses what a subscriber receives:
//     cloudevents (the default) the structured event, raw its payload
//     alone. On SSE a raw payload that is valid UTF-8 goes on data lines
//     (its line breaks cut it into lines, which a client joins with LF),
//     any other payload base64-encoded (standard alphabet, padded) on one
//     data line of an SSE event of type "base64"; the SSE id is the event
//     id either way. On a WebSocket a raw UTF-8 payload is a text message,
//     any other a binary one. Another format gets 400.
//
// A GET with the query parameter wait or after is a long-poll (no
// WebSocket upgrade). The first, without after, opens a cursor: a
// subscription to the scope (with the filter parameter's filter) that
// buffers what arrives between polls, in a queue bounded as a
// subscriber's. Every reply is 200 with an application/cloudevents-batch+json
// array and the cursor in the Rsbd-Cursor header; the next poll passes it
// as after (on the same scope), so nothing that arrived in between is
// lost. A poll returns at once when the cursor holds events, else at the
// first event or after wait (a Go duration up to 30s; 0 by default) with
// an empty array; a reply holds at most 100 events and about 1 MiB, the
// rest waits for the next poll. A batch once replied is gone from the
// cursor (at most once: a reply the client never read is lost). A cursor
// not polled for twice the longest wait expires, and what it held is
// counted (Stats.PollExpired); polling it then gets 410, polling it while
// another poll waits on it 409, a bad wait 400. Cursors count among the
// subscriptions bounded by Config.MaxSubscribers.
//
// Config.Tokens (or Gateway.SetTokens) turns on bearer tokens: every
// request then needs "Authorization: Bearer TOKEN" (a GET may send the
// token as the query parameter access_token instead, as browsers cannot
// set headers on a WebSocket or an EventSource). Tokens are compared in
// constant time. A missing or unknown token gets 401 with
// WWW-Authenticate: Bearer. Each token lists the scope prefixes it may
// publish to and those it may subscribe from; a request outside them gets
// 403, and so does a WebSocket message published outside them. A
// subscription must lie within an allowed prefix as a whole: a token
// limited to /robot/arm/ may not subscribe to /robot/. Refusals are counted
// as "unauthorized" and "forbidden" (Stats.Rejected). Webhooks added in Go
// are not checked.
//
// AddWebhook subscribes a URL: each event on a scope that passes a filter
// is POSTed there in structured mode, one at a time, at least once: 200,
// 201, 202 and 204 accept it; 410 ends the webhook; a 429's Retry-After is
// waited for; redirects are not followed; other failures and timeouts are
// retried with doubling back-off (Backoff up to MaxBackoff) for
// MaxAttempts attempts, after which the event goes to the dead-letter scope
// with the user info "rsbd:webhook-error", or is dropped without one
// (counted either way).
//
// Before its first delivery a webhook runs the validation handshake of
// the CloudEvents HTTP Web Hooks spec's abuse protection: an OPTIONS
// request with WebHook-Request-Origin (WebhookConfig.Origin, by default
// the host name), which the target answers with WebHook-Allowed-Origin
// naming that origin or "*". Any other answer ends the webhook with
// ErrWebhookRefused, an unanswered handshake (MaxAttempts tries, as a
// delivery's) with ErrWebhookUnvalidated; both are logged and counted by
// reason in Stats.WebhooksEnded. Validation is on by default, so that no
// one who may create a webhook can aim the gateway at a URL that did not
// agree to it; WebhookConfig.SkipValidation turns it off for targets that
// do not implement the handshake (in Go and in the daemon's
// configuration, never over HTTP).
//
// Webhooks are created over HTTP too, under the path prefix /.gateway/,
// which no scope can take ('.' is not a scope character): POST
// /.gateway/webhooks with {"scope":…, "url":…, "filter":<filter list as
// JSON>, "deadLetter":…} (scope and url required, unknown fields refused)
// starts one and answers 201 with {"id":…}; GET /.gateway/webhooks lists
// them with their counters; DELETE /.gateway/webhooks/<id> stops one (204,
// 404 for an unknown id). At most 64 exist at once (409 beyond). With
// tokens configured the API needs one (401 otherwise), and a webhook's
// scope must lie within the token's subscribe prefixes and its dead-letter
// scope within its publish prefixes (403 otherwise). Without tokens,
// whoever reaches the gateway can make it send OPTIONS requests to any
// URL, and POST to those that agree (the validation handshake above):
// serve it where only trusted clients do.
//
// RSB events become CloudEvents by package cloudevent's mapping, so an
// event published here and received by an RSB client carries its
// CloudEvents attributes as "ce:" user infos, and an RSB event received
// here carries its RSB metadata as rsb… extensions.
//
// An event with the emttl extension (a time to live in milliseconds from
// its time, see package mesh/frame) that has expired is neither published
// nor delivered, and counted (Stats.Expired); a POST reply marks it
// "expired".
//
// Every subscriber has a queue bounded in events and bytes
// (Config.QueueLen, Config.QueueBytes): a client that does not keep up
// loses the events that find its queue full, counted in Stats.Dropped, and
// never holds up the bus or other subscribers. At most
// Config.MaxSubscribers subscriptions are served at once; one more gets
// 503.
//
// The package also registers the "cloudevents" FrameAdaptor with package
// mesh: structured CloudEvents JSON to and from EVENT frames.
package cloudevents
