package cloudevents

import (
	"time"

	"github.com/rsbd/rsbd/cloudevent"
)

// Defaults of Config and fixed limits of the gateway.
const (
	// DefaultMaxBodyBytes bounds a POST body: the largest batch the JSON
	// format takes.
	DefaultMaxBodyBytes = cloudevent.MaxBatchBytes

	// DefaultQueueLen bounds the events waiting for one subscriber: enough
	// for a burst while the client's connection drains, small enough that
	// a thousand stalled subscribers hold little.
	DefaultQueueLen = 256

	// DefaultQueueBytes bounds what the events waiting for one subscriber
	// weigh together (their JSON): without it a queue of DefaultQueueLen
	// events of the largest size would hold gigabytes.
	DefaultQueueBytes = 16 << 20

	// DefaultMaxSubscribers bounds the SSE and WebSocket subscriptions a
	// gateway serves at once; one more gets 503.
	DefaultMaxSubscribers = 1024

	// DefaultWriteTimeout bounds one write to a subscriber; a client that
	// does not read for that long is disconnected.
	DefaultWriteTimeout = 10 * time.Second

	// DefaultWebhookAttempts bounds the deliveries a webhook tries per
	// event before it gives the event up to its dead-letter scope.
	DefaultWebhookAttempts = 5

	// DefaultWebhookBackoff is a webhook's wait after a first failed
	// attempt; it doubles after each further one.
	DefaultWebhookBackoff = 100 * time.Millisecond

	// DefaultWebhookMaxBackoff bounds a webhook's wait between attempts,
	// a 429's Retry-After included: one event does not hold the webhook for
	// long.
	DefaultWebhookMaxBackoff = 10 * time.Second

	// DefaultWebhookTimeout bounds one delivery attempt, and one request
	// of the validation handshake.
	DefaultWebhookTimeout = 10 * time.Second

	// fallbackOrigin is the WebHook-Request-Origin of a webhook's
	// validation handshake when neither its config nor the host has a
	// name: a target allowing "rsbd" knows what calls it.
	fallbackOrigin = "rsbd"

	// Subprotocol is the WebSocket subprotocol of the CloudEvents
	// WebSocket binding for JSON, the only one served.
	Subprotocol = "cloudevents.json"

	// maxWSMessage bounds a message a WebSocket client sends: one
	// structured event.
	maxWSMessage = cloudevent.MaxEventJSONBytes

	// accessTokenParam is the query parameter carrying a bearer token on
	// a GET without an Authorization header: browsers cannot set headers
	// on a WebSocket or an EventSource.
	accessTokenParam = "access_token"

	// AdminPrefix starts the paths of the gateway's own API; no scope can
	// take it, as '.' is not a scope character.
	AdminPrefix = "/.gateway/"

	// WebhooksPath is where webhooks are created (POST), listed (GET) and,
	// below it by id, removed (DELETE).
	WebhooksPath = AdminPrefix + "webhooks"

	// maxHTTPWebhooks bounds the webhooks created over HTTP: each holds a
	// subscription and a goroutine, and a client must not be able to make
	// the gateway hold without bound.
	maxHTTPWebhooks = 64

	// maxWebhookRequest bounds the body of a webhook request: a scope, a
	// URL, a dead-letter scope and a filter fit in far less.
	maxWebhookRequest = 64 << 10

	// maxPollWait bounds a long-poll's wait: well under the idle timeouts
	// of common proxies and load balancers, so a waiting poll is not cut.
	maxPollWait = 30 * time.Second

	// pollMaxEvents bounds the events of one long-poll reply: the rest
	// waits in the cursor's queue for the next poll, which comes at once.
	pollMaxEvents = 100

	// pollMaxBytes bounds a long-poll reply's JSON (an event heavier than
	// that alone goes by itself): a client's parser is not handed a whole
	// queue of large events at once.
	pollMaxBytes = 1 << 20

	// pollIdle is how long a long-poll cursor keeps buffering without a
	// poll: twice the longest wait, so a client polling in a loop never
	// loses its cursor, while one that left frees its queue soon.
	pollIdle = 2 * maxPollWait

	// headerPrefix starts the HTTP headers of the binary mode's attributes.
	headerPrefix = "ce-"
)
