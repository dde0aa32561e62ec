package node

import "github.com/rsbd/rsbd/node/sinks"

// Handler receives the events of an embedded subscription (see
// sinks.Handler for when and on which goroutine it runs).
type Handler = sinks.Handler

// LossHandler receives the unrecoverable losses of streams that carried
// events of a subscription's scope, in order with the events.
type LossHandler = sinks.LossHandler

// SubscribeOption configures a subscription.
type SubscribeOption = sinks.SubscribeOption

// WithLoss makes the subscription receive loss reports through fn.
func WithLoss(fn LossHandler) SubscribeOption { return sinks.WithLoss(fn) }

// WithoutRetention promises that the handler keeps nothing of an event
// once it returns, so the node may lend it events in reused memory.
func WithoutRetention() SubscribeOption { return sinks.WithoutRetention() }
