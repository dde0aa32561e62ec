// Package engine is a node's stream engine: every qos sender and receiver
// stream machine, the fragment assemblers, flow control and ACKs, and the
// queues between them and the rest of the node.
//
// Inputs are publish requests (Submit), received datagrams (Receive),
// departed peers (Forget) and the clock; outputs are datagrams, written to
// Env.Conn, and deliveries (events and loss reports) for the local sinks,
// collected in receive order into the delivery Queue.
//
// Who owns what:
//   - One mutex guards every machine. The engine goroutine (Run, started
//     and waited for by the node; it returns after Stop) takes it per
//     queued input and per timer. A sparse publish and a receive batch
//     that finds nothing queued are handled directly on the publisher's or
//     the UDP reader's goroutine (Submit, Receive), saving a goroutine
//     wake-up per hop; bursts go through the queues, where small events
//     share datagrams. Order is kept: the direct paths run only when
//     nothing is queued. A direct path that finds another goroutine's
//     section under way waits for it: sections are brief, and the engine
//     goroutine would wait for the same lock. The timer fires at the
//     earliest real deadline (sender streams sit in a heap by deadline),
//     so it does not take the lock for nothing.
//   - The publish queue (pubQueue) has its own mutex: publishers append,
//     the engine takes everything queued at once.
//   - Handlers never run under the engine mutex. The delivery Queue
//     belongs to one delivering goroutine at a time: a UDP reader that
//     delivers its own small batch (through Env.Sinks), else the node's
//     delivery goroutine (Queue.Wake, Queue.Take). Publishes a handler
//     makes wait in the senders' pending datagrams until the delivering
//     goroutine sends them (FlushReplies).
//
// The step functions below the goroutine edge (publish, receive, tick,
// flush, handleOutput, handleAck, sendAcks) take the time as an argument
// and act only on the engine and its Env, so tests drive them with a fake
// clock and a recording Env. The limits are in params.go.
package engine
