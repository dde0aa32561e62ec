package web

import "time"

// Limits and timers of the package.
const (
	// RateWindow is the period over which /api/scopes computes rates.
	RateWindow = time.Second
	// IdleRates is how long the rate listener stays open without a
	// request for /api/scopes.
	IdleRates = 30 * time.Second
	// maxScopes bounds the scopes the rate table keeps; events on further
	// scopes are counted under otherScopes.
	maxScopes = 4096
	// maxTails bounds the tails served at once; more are refused (503).
	maxTails = 16
	// tailQueue bounds the events a tail holds for a slow browser.
	tailQueue = 256
	// maxPreview bounds the payload bytes a tail event shows.
	maxPreview = 1024
	// defaultSearchLimit is the search's limit when the request sets none.
	defaultSearchLimit = 100
	// keepAlive is the interval of SSE comments on an idle tail.
	keepAlive = 15 * time.Second
)

// otherScopes is the row of events on scopes past maxScopes.
const otherScopes = "(other scopes)"
