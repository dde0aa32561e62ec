// Package interest holds the pure parts of a node's interest: which groups
// its local sinks want, and which scopes it still receives after giving
// them up. It has no goroutines and no clock of its own; the node's
// interest loop (node/interest.go) feeds it the derived scopes and the
// time, and does the gossip and the multicast joins.
//
//   - Minimal reduces the sinks' scopes to a set where no scope contains
//     another, so an event reaches the host through exactly one group;
//     Set and Covered answer containment questions.
//   - WantedSet maps the wanted groups to their scopes; readers (socket
//     readers, the engine) look groups up without a lock while the interest
//     loop replaces it.
//   - Linger is the set of narrowed-away scopes still received until every
//     peer confirmed the narrower state (or a deadline passed): Narrow,
//     Stamp, Settle and Accepted are its transitions.
package interest
