// Package client is rsbd's Go implementation of the RSB participant model.
//
// A Bus is a process's connection to the bus. It is reached in one of two
// ways with the same API above it:
//
//   - Dial connects over the RSB socket protocol to rsbd (or to any RSB socket
//     server, which relays frames between its clients). One reader goroutine
//     per Bus hands received events to the local participants. Servers never
//     send a frame back to its sender, so the Bus delivers a participant's own
//     events to the local participants itself, as RSB clients do. Publishing
//     queues the event (up to 4 MiB; past it Publish waits for room or its
//     context) and a writer goroutine writes what was queued together, one
//     system call for a burst of events; an event published alone, after a
//     pause, is written by the publisher itself as far as the socket takes
//     it at once, which spares a request or a reply a hand-off between
//     goroutines. Flush waits until the queue is written; Close writes it
//     out (for at most 5 s) before it closes the connection. Events the
//     connection lost before they were written are counted in
//     BusStats.Unsent, and the next Publish returns ErrDisconnected.
//     Received events share the memory they were read into (slabs of
//     16 KiB): an event kept keeps its slab.
//   - Embedded (or NewEmbedded) makes the process itself a node of the rsbd
//     cluster: events are published with node.PublishDetached and received
//     through node.Subscribe, no daemon involved.
//
// Participants are created from a Bus:
//
//   - Informer publishes events on its scope or any sub-scope. Payloads are
//     converted by the Bus's notification.Registry, chosen from the Go type of
//     the value or from an explicit wire schema (WithWireSchema). Event ids are
//     (the informer's random participant UUID, a per-informer sequence number
//     from 0); create and send times are set in microseconds.
//   - Listener calls handlers for the events on its scope and sub-scopes that
//     pass its filters (scope, method, origin, wire schema). A handler's error
//     or panic is logged and counted; it never stops the Bus. Handlers run on
//     the listener's own goroutine, or with WithInlineDelivery on the one
//     that receives the event: no queue and no hand-off, for the lowest
//     latency, but a handler then holds up the Bus's other deliveries.
//   - Reader queues the same events for Read, which waits with a context.
//   - LocalServer and RemoteServer implement RSB request/reply: a method
//     scope is <server scope>/<method>/, requests carry method REQUEST and
//     replies method REPLY with the request's event id as first cause; error
//     replies carry the user info "rsb:error?" and the message as a
//     utf-8-string payload (RemoteError). Call returns the first reply and
//     ignores later ones.
//
// Every received event passes through a bounded per-participant queue
// (except for listeners WithInlineDelivery, and events a connection's
// reader hands an idle Listener itself), bounded in events (WithQueue,
// default DefaultQueueSize) and in what they weigh (WithQueueBytes, default
// DefaultQueueBytes: their data and a fixed overhead each); when a queue is
// full the event is dropped by the participant's DropPolicy and counted
// (drops by the byte bound apart), so a slow participant never stalls the
// Bus or the others, nor holds more memory than its bounds.
//
// # Performance
//
// A listener may keep the events it is given, so every received event is
// an allocation of its own, and its data keeps the 16 KiB slab it was read
// into alive. A listener whose handlers keep nothing once they return says
// so with WithoutRetention: it gives its events back, a batch at a time,
// and over the socket protocol an event it receives allocates nothing but
// its payload's conversion. The memory its frames were read into (slabs,
// and size-class buffers for frames above 16 KiB) is read into again once
// its events are back. On the publishing side, small events are encoded
// into arenas that are used again once their frames are written, a large
// event's frame buffer is reused once written, and the wire event of a
// publish no local listener wants is reused at once: it is encoded (or
// copied by the embedded node) for the bus, and only an event a local
// listener gets takes copies of the publisher's data, causes and meta
// data. A participant that reads Data alone skips the conversion of
// payloads with WithoutConversion. What a connection
// keeps for reuse (at most 1 MiB of slabs, 16 MiB of larger ones, 8 MiB of
// frame buffers and 1 024 given-back events) it lets go after 2 s in which
// it took none of it; spare arenas (1 MiB) go when its writer goroutine
// ends, 100 ms after its last frame.
//
// What a program still allocates keeps the garbage collector busy in
// proportion to its rate, and the collector paces itself by the program's
// live heap: a program with little live memory collects often. Such a
// program gives the collector room with GOGC or a memory limit
// (runtime/debug.SetMemoryLimit); the package changes neither.
//
// Handing an event from the connection's reader to a listener's goroutine
// costs a wake-up of that goroutine, on a host with idle CPUs tens of
// microseconds. An event that finds its listener (or LocalServer method)
// idle and the connection quiet is therefore handled by the reader itself
// (BusStats.QuickDeliveries); a stream of events, or a listener still busy,
// goes through the queue. For the lowest latency whatever the load,
// listeners deliver inline (WithInlineDelivery).
//
// # Introspection
//
// Unless Config.NoIntrospection is set, each participant (except those under
// /__rsb/) is announced with an introspection Hello on
// /__rsb/introspection/participants/<ID>/ when created and a Bye when closed,
// carrying its kind, id, scope and the process and host it runs on. Over the
// socket protocol these announcements are how rsbd learns which scopes the
// connection wants. SURVEY events on /__rsb/introspection/participants/ are
// answered by re-sending every Hello with the survey's id as cause, and a
// REQUEST on a participant's own introspection scope by re-sending its Hello;
// a query whose payload is the string "ping" is answered by a "pong" per
// participant instead. A server's methods are announced as RSB does: a
// local-method or remote-method (the latter on its first call) whose parent
// is the server, with a listener and an informer whose parent is the
// method. Listeners created WithReservedAnnouncement are announced even
// under /__rsb/ (tools that listen to introspection only).
//
// Each Bus also serves the process's echo method on
// /__rsb/introspection/hosts/<HOST-ID>/<PID>/ (IntrospectionProcessScope):
// the reply carries the request's payload and its send and receive times as
// the user times request.send and request.receive, from which remote
// introspection (package introspection) estimates latency and clock offset.
//
// A listener may miss events published before the daemon processed its Hello
// and, across hosts, before the other daemons learnt the new interest: the
// RSB socket protocol has no acknowledgement for announcements.
package client
