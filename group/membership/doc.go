// Package membership runs rsbd's cluster membership on memberlist: it joins
// and leaves the cluster of rsbd daemons, reports members joining, leaving and
// failing, and gossips which groups each daemon wants into a group.Interest
// table.
//
// # Members
//
// Each daemon is a memberlist node whose metadata carries its instance id
// (random per daemon start) and its unicast UDP data address. Events delivers
// EventJoin for every new instance, EventLeave for a member that announced
// its departure (Leave) and EventFail for one that stopped answering or came
// back as a new instance under the same name; the event carries the departed
// instance id so the node can free the streams of that instance. A node that
// failed may come back under its name from another address once
// DeadNodeReclaimTime has passed.
//
// StartJoining (Config.Join) runs the join loop: it contacts the seeds in
// the background, and again whenever the node has no peer, backing off
// from JoinRetry to JoinRetryMax, so daemons find each other whatever the
// order they start in. Outgoing TCP connections go through a transport
// whose dials and open connections Close aborts first, so a seed that
// never answers holds up neither New nor Close.
//
// # Interest gossip
//
// The groups this node wants form a reference-counted group.LocalSet
// (AddLocalGroup, RemoveLocalGroup, SetLocalGroups); every change raises its
// version. The new state is queued on memberlist's transmit-limited broadcast
// queue when it fits MaxBroadcastBytes, and otherwise pushed to every member
// over TCP. Receivers apply a state only if it belongs to the sender's current
// instance and is newer than what they hold, and relay small news once so it
// spreads epidemically. Push/pull exchanges carry the whole table, so late
// joiners and restarted nodes converge without waiting for changes. States of
// members not known yet are held in a small bounded buffer until their
// membership arrives.
//
// PushLocal (the node's interest barrier) sends the current state straight
// to every member and waits for each to confirm it. A member that confirmed
// an earlier version of a large state gets only the groups added and
// removed since (group.PeerDelta, from the LocalSet's bounded history); a
// member holding any other version asks for the whole state, which it then
// gets and confirms. The push loop leaves out the members PushLocal is
// sending a state to.
//
// With Config.Keys, memberlist encrypts all gossip with that keyring and
// refuses unencrypted gossip; SetKeys rotates the keys while running.
// Sender names the member running a data-plane instance, from an index
// rebuilt when members change: the data plane's check that a datagram
// comes from the cluster.
//
// Interest returns the table read-only; it is what the publish path asks
// whether any peer wants a group and, in unicast mode, which peers.
//
// # Concurrency
//
// Memberlist calls this package's delegates from its own goroutines, some
// with its locks held; they never block and never call back into memberlist.
// The only goroutine of the package pushes large states; Close stops it and
// memberlist, and is idempotent. Network input (metadata, interest messages,
// push/pull tables) is decoded with length checks, bounded, and every drop is
// counted in Stats.
package membership
