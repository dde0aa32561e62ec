// Package node is the embeddable rsbd bus endpoint; the daemon is a thin
// main around it.
//
// A Node owns:
//   - the local sinks: RSB socket clients (through an rsbsocket.Server) and
//     embedded subscriptions (Subscribe), matched by scope: a sink on /a/
//     receives /a/ and every sub-scope;
//   - the stream engine (package node/engine): one goroutine that owns
//     every qos sender and receiver stream machine and the fragment
//     assemblers, fed by bounded queues from the socket clients and the
//     embedded publishers (the engine takes a burst at once) and from the
//     UDP readers; the node gives it its environment (engineenv.go: the
//     transport, the interest tables, the metrics and itself as the
//     deliverer of what the engine releases);
//   - the network: a transport.Conn (UDP multicast, or unicast to each
//     interested peer) and a memberlist cluster that carries which groups
//     each node wants.
//
// Publish path: local delivery first (other socket clients, matching
// subscriptions), then for each group of the scope and its super-scopes
// that some peer wants, the event is split into FragmentedNotification
// records that fit one datagram and queued on the sender stream of
// (instance, group, class). Small events share datagrams under load.
//
// Receive path: datagrams of groups no local sink wants are dropped on the
// reader goroutine before copying; the rest go to the receiver stream of
// their sender (on the reader goroutine straight from its buffer when the
// engine is idle, else copied and queued to the engine goroutine), which
// repairs, orders and deduplicates by class and reports unrecoverable loss;
// released records are reassembled and, after the engine lock is released,
// delivered in receive order (engine.Queue) to the local sinks whose
// scope matches the event's scope again (deliver.go): by the reader itself
// for small batches when no delivery is under way, else by the node's
// delivery goroutine.
// A delivered event's Data aliases the node's copy of its body: bodies of
// 512 B to 4 KiB are copied into slabs they share with 7 to 15 others of
// their size, so a Handler that retains such an event keeps its slab alive
// (less than 16 times the event's size; see params.go).
//
// Interest: the node derives the minimal set of scopes its sinks want
// (a connection that announced no listener wants everything, i.e. the root
// scope), tells peers the groups of those scopes through memberlist and
// joins their multicast addresses.
//
// Sealing: with Config.Keys the node wraps its Conn and Handler in a
// transport.Guard (every datagram sealed, only authentic, unreplayed
// datagrams of members accepted; the member lookup is the membership's
// Sender) and gives memberlist the same keys and the cluster label;
// SetKeys rotates both while running.
package node
