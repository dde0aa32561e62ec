// Package rsbsocket is the server of the RSB socket transport, the TCP
// protocol RSB clients use by default (port 55555). Package frame is its
// codec and package sockclient its client.
//
// # Wire protocol
//
// After accepting a connection the server writes exactly 4 zero bytes; then
// each direction is a sequence of frames: a 4-byte little-endian length
// followed by one serialized rsb.protocol.Notification. Orderly shutdown is
// shutdown(SHUT_WR), wait for the peer's EOF, close; a side that receives
// EOF replies the same way. Package frame is the codec; it extracts scope,
// event id, wire schema, method and payload from a frame body without
// decoding it fully, so frames are relayed byte for byte.
//
// # Server
//
// There are no subscription messages in the RSB socket protocol. A Server
// forwards every frame received on connection X itself to every other
// connection whose interest matches the frame's scope, never back to X (an
// echo would make the sender deliver its own event twice), and also hands
// it to its Handler, which forwards it to the network. Deliver queues frames
// from elsewhere (the network, embedded participants) the same way. A new
// connection is routed before its greeting is written, and frames queued
// for it meanwhile go out right behind the greeting: a client that has read
// the greeting misses no frame sent after that.
//
// A connection's interest is learnt from the introspection events it
// publishes: a Hello (wire schema .rsb.protocol.introspection.Hello) on
// /__rsb/introspection/participants/<ID>/ announces a participant, a Bye
// removes it. A connection that announced at least one listening participant
// (every kind but informer: listener, reader, local-server, remote-server,
// ...) wants exactly the scopes of those participants, each including its
// sub-scopes, plus /__rsb/introspection/ so that surveys reach it. Any other
// connection wants every event (Config.DefaultInterest InterestAll, the
// default, which is what an RSB socket server does for every client), or
// with InterestNone nothing but introspection once it has announced
// informers. Events published between a listener's creation and the arrival
// of its Hello can be missed by that listener; that is the price of not
// sending every event to every client.
//
// Garbage, frames that are not Notifications and oversized frames are
// logged, counted (Stats) and close the offending connection; the server
// keeps serving the others.
//
// # Flow control
//
// Each connection has a send queue bounded in frames and bytes, and no
// goroutine of its own for writing while it is idle. Frames reach the
// queues on two paths:
//
//   - Deliver, for frames from elsewhere (the node's engine), never blocks.
//     When a queue is full the frame is dropped for that connection and
//     counted (DropQueueFull), and under SlowClientDisconnect the
//     connection is closed. A frame that finds its queue without a writer
//     starts a writer goroutine, which exits once the queue is empty.
//   - A frame a client publishes is forwarded by that client's reading
//     goroutine, which waits while a target's queue is above its high
//     watermark (three quarters of the bounds) until the target's writer
//     has made room. A subscriber that reads slower than its publisher
//     writes thus slows the publisher down (its frames wait in its socket,
//     TCP's flow control does the rest) and loses nothing. The wait is
//     bounded by Config.StallTimeout: a target that has made no room by
//     then is stalled, the frame is handled by SlowClientPolicy, and later
//     frames for it are not waited for until its queue has drained to half
//     its bounds. A client that stops reading thus delays the clients
//     publishing to it, and their frames to others, once by at most
//     StallTimeout, and never the daemon; clients that wait on each other
//     cannot lock up either. The quarter of each queue above the high
//     watermark stays free for Deliver, so a local flood does not crowd
//     out events from the network.
//
// Stats counts the waits (Waits) and the stalls (Stalls).
//
// A reader that forwarded frames flushes its targets before it would block:
// when no whole frame is left in its buffer, after 64 KiB forwarded, or
// before its Handler sees a frame that changed the client's interest. A
// target without a writer is written on the reader's own goroutine, as
// much as its socket takes without blocking (Stats.DirectWrites); a
// writer goroutine takes over the rest (Stats.WriterStarts). A quiet
// relay, such as a request and its reply, thus costs no goroutine
// hand-off in the server, and a publisher's burst to many subscribers
// costs one write per subscriber per read. Frames wait for the flush
// while the reader's Handler runs; a Handler that blocks (the node when
// the network's flow control is closed) delays up to 64 KiB of them.
//
// A reader that wrote everything of a flush itself, to a single
// connection, polls that connection's socket and its own for up to
// Config.SpinWait before it parks, when that connection has answered the
// last relays to it within SpinWait (Stats.SpinWaits, Stats.SpinHits). The
// reply of a request/reply through the server then finds a thread awake
// instead of waking one. A subscriber that only receives never makes a
// reader poll, and a reader polls only for a single conversation: while
// at most two connections answer and no other reader polls, until another
// reader reads a frame.
//
// A writer sends each frame's header and body in one system call
// (rsb-python reads the length with a plain recv(4)) and coalesces queued
// frames into one writev, each frame contiguous, using buffers it borrows
// for the time of the write. A connection's read buffer starts at 512
// bytes, borrowed from a pool while frames arrive, and grows to 64 KiB once
// the client sends many small frames, so an idle client costs a few KiB.
//
// # Who writes a connection's socket
//
// At any moment at most one goroutine writes to a connection's socket: the
// owner of its send queue (sendQueue.owned, under the queue's mutex). Every
// write is the owner's, the greeting, the frames, the write deadlines and
// the final SHUT_WR alike. Only closing the socket is not: conn.abort may
// run on any goroutine, and a write under way then fails and its owner
// lets go. The owner is one of:
//
//   - the connection's goroutine (conn.serve), from startConn until it has
//     written the greeting (conn.handshake);
//   - a writer goroutine (conn.writeLoop, owner.go), while a backlog lasts;
//   - a goroutine flushing the connections it queued frames to
//     (flushState.flush, direct.go): another connection's reader, which
//     forwards what its client publishes (conn.readRun, Server.forward), or
//     the goroutine using a DeliverBatch (Server.DeliverTo,
//     DeliverBatch.Flush). It claims the queue (sendQueue.claim) and
//     writes on its own goroutine what the socket takes without blocking
//     (conn.flushDirect, conn.writeDirect);
//   - the goroutine performing the final drain of an orderly close
//     (conn.finalDrain).
//
// Ownership is taken only from a queue without an owner: by startConn, by
// the Deliver caller whose sendQueue.push reports start (conn.enqueue), by
// a flush through sendQueue.claim, and for the final drain through
// sendQueue.claimFinal (conn.shutdown, conn.finish); an owner whose
// sendQueue.letGo reports final keeps it for the final drain instead
// (conn.letGo, conn.flushDirect). It passes to a new goroutine at every
// "go c.writeLoop(h)" and "go c.finalDrain()": the owner starts it and
// then touches the socket no more; the handoff h carries the bytes and
// frames it left unwritten. A writer is started by conn.serve when frames
// were queued behind the greeting, by conn.enqueue, by flushState.flush
// for more than directTargetsMax connections, by conn.flushDirect for a
// connection without a raw socket or after directRounds rounds, and by
// conn.writeDirect for what the socket did not take; a final drain by
// conn.shutdown and by conn.flushDirect. Ownership ends at sendQueue.letGo
// (conn.letGo for the greeting and a writer) only when no frame is
// pending, and at sendQueue.endFinal after the final drain. Frames queued
// without an owner, by Server.forward (sendQueue.offer) and
// Server.DeliverTo (sendQueue.pushUnowned), are flushed by whoever queued
// them before it waits for anything, so a queued frame always has an
// owner or a flush on its way. conn.finish waits until the queue has no
// owner (sendQueue.waitIdle) before it closes the socket.
package rsbsocket
