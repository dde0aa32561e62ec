// Package sinks owns a node's embedded subscriptions and what delivering to
// them needs, apart from the engine and the sockets:
//   - Table, the subscriptions by scope (an open-addressing index probed at
//     the event scope's prefixes in place, only at subscribed depths), with
//     Subscription, Handler, LossHandler and the SubscribeOptions;
//   - MatchCache, a delivering goroutine's memory of its last scope's
//     matches for a table generation;
//   - RecentEvents, the bounded set of event ids that drops the second copy
//     of an event reaching the node through two groups;
//   - BodySlabs, which copies received bodies out of a reader's buffer into
//     shared slabs sized so that a retained event pins little.
//
// A Table is safe for concurrent use; a MatchCache, RecentEvents and
// BodySlabs belong to one goroutine at a time. Limits are in params.go.
package sinks
