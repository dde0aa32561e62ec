// Package faultnet is a fault-injecting in-memory network for rsbd's tests.
// Its Endpoint implements transport.Conn, so a node under test runs on it
// exactly as on real UDP sockets.
//
// Endpoints listen on made-up IPv4 addresses and join multicast groups; a
// datagram sent to a group reaches every endpoint that joined it (the
// sender only if Config.Loop is set), and one sent to an endpoint's address
// reaches that endpoint. Each direction of each link (sender, receiver) can
// lose datagrams at random or in bursts (a Gilbert-Elliott model),
// duplicate them, and delay them by a base delay plus random jitter and
// occasional long hold-backs, which reorders them. An endpoint can be
// blacked out, cut off in both directions, for an interval.
//
// Everything is deterministic given Config.Seed and the order of Send calls:
// each link draws from its own generator seeded from the network seed and
// the link's addresses, so traffic on other links does not change its fate.
// Delays use only time.AfterFunc timers, no sleeping goroutines, so inside
// a testing/synctest bubble they run on the bubble's virtual clock; create
// the Network's endpoints inside the bubble.
package faultnet
