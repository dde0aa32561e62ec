package node

import (
	"time"

	"github.com/rsbd/rsbd/node/engine"
)

// Defaults of Config. Every limit of the node lives here; the stream
// engine's own are in node/engine/params.go.
const (
	// DefaultSocketAddr is where RSB socket clients connect (RSB's default
	// port 55555 on all IPv4 interfaces, as RSB's own servers bind).
	DefaultSocketAddr = ":55555"
	// maxSocketPath is the longest Unix socket path Linux takes (sun_path
	// holds 108 bytes with the terminating NUL).
	maxSocketPath = 107
	// staleSocketProbe bounds the dial that tells a live socket file at
	// SocketPath from one a dead daemon left behind.
	staleSocketProbe = time.Second
	// socketFileMode is the Unix socket's permission: every local user may
	// connect, as every local user may reach the TCP port.
	socketFileMode = 0o666
	// DefaultGossipAddr is the memberlist bind address.
	DefaultGossipAddr = "0.0.0.0:7946"
	// DefaultDataAddr is the unicast UDP address for data, NACKs and repairs;
	// port 0 picks a free port, advertised to peers through memberlist.
	DefaultDataAddr = "0.0.0.0:0"
	// DefaultLoopbackDatagram is the datagram size when multicast stays on
	// the loopback interface (MTU 65536): large datagrams move big events
	// with few system calls.
	DefaultLoopbackDatagram = 60000
	// DefaultLANDatagram is the datagram size on a real interface: it fits
	// a 1500-byte Ethernet MTU with IP and UDP headers and room to spare.
	DefaultLANDatagram = 1400
	// DefaultPublishQueue is the engine's default of the same name (see there).
	DefaultPublishQueue = engine.DefaultPublishQueue
	// DefaultPublishQueueBytes is the engine's default of the same name (see there).
	DefaultPublishQueueBytes = engine.DefaultPublishQueueBytes
	// DefaultReceiveQueue is the engine's default of the same name (see there).
	DefaultReceiveQueue = engine.DefaultReceiveQueue
	// DefaultReceiveQueueBytes is the engine's default of the same name (see there).
	DefaultReceiveQueueBytes = engine.DefaultReceiveQueueBytes
	// DefaultMaxSenders is the engine's default of the same name (see there).
	DefaultMaxSenders = engine.DefaultMaxSenders
	// DefaultSenderIdle is the engine's default of the same name (see there).
	DefaultSenderIdle = engine.DefaultSenderIdle
	// DefaultReliableAssemblyTimeout is the engine's default of the same name (see there).
	DefaultReliableAssemblyTimeout = engine.DefaultReliableAssemblyTimeout
	// DefaultReliablePartialEvents is the engine's default of the same name (see there).
	DefaultReliablePartialEvents = engine.DefaultReliablePartialEvents
	// DefaultUnreliableAssemblyTimeout is the engine's default of the same name (see there).
	DefaultUnreliableAssemblyTimeout = engine.DefaultUnreliableAssemblyTimeout
	// DefaultShutdownFlush bounds how long Close waits for reliable streams
	// to answer outstanding NACKs before leaving the cluster.
	DefaultShutdownFlush = 500 * time.Millisecond
	// DefaultInterestBarrier bounds the wait of a new listener for its
	// interest to reach the peers (a TCP push to each, in parallel).
	DefaultInterestBarrier = 500 * time.Millisecond
	// DefaultInterestLinger keeps receiving a scope for this long after the
	// last local sink on it went away: long enough for gossip to tell every
	// peer (a push/pull round of the LAN profile is 15 s, gossip itself
	// takes well under a second).
	DefaultInterestLinger = 3 * time.Second
	// DefaultReorderBytes and DefaultReorderDatagrams bound what an
	// ordered reliable receiver holds behind a hole (qos's own defaults are
	// 4 MiB and 1024): room for twice the flow window, because everything
	// in flight after a lost datagram waits there for its repair, and a
	// sender's window can be overshot by the fragments of one event, by
	// repairs and heartbeats (flowWindow takes half of this hold). With
	// 1400-byte datagrams a 1 MiB event alone is 750 of them; 16 MiB keeps
	// the window of 60 000-byte datagrams at its 104 (flowWindowBytes).
	// The hold is only filled while a hole waits for its repair, and the
	// receivers' table bounds all holds together (qos.DefaultMaxBytes).
	DefaultReorderBytes     = 16 << 20
	DefaultReorderDatagrams = 8192
	// DefaultRetainBytes is the retransmit buffer per reliable stream in
	// bytes (qos's own default is 8 MiB): room for the flow window plus
	// repairs of what was just evicted from it.
	DefaultRetainBytes = 24 << 20
	// DefaultHeartbeatMin is the first heartbeat after data (qos's own
	// default is 10 ms): a lost last datagram is only noticed by the
	// heartbeat, so this bounds tail-loss repair latency; the heartbeats
	// then back off doubling to a second, about ten per idle period.
	DefaultHeartbeatMin = 2 * time.Millisecond
	// inlineDeliverMax: a socket reader delivers the events it received
	// itself (no hand-off) when they total at most this many bytes; larger
	// ones go to the delivery goroutine, so that the reader returns to its
	// socket at once.
	inlineDeliverMax = 64 << 10
	// borrowInlineMax is inlineDeliverMax for a node whose subscriptions
	// all borrow (WithoutRetention) and that has no socket clients: a
	// reader then delivers a whole receive batch from its buffer, with no
	// copy, rather than copying it out for the delivery goroutine, which
	// raises the throughput of borrowing subscribers (docs/TUNING.md). A
	// slow handler holds up that socket's reader, which back-pressures the
	// senders through the flow window.
	borrowInlineMax = 4 << 20
	// reasmHead and reasmTail are the room kept before and after the data
	// of every reassembled event (fragmentation.Config.Room), where its
	// other Notification fields go when it is serialized for socket
	// clients (frameAround): scope, wire schema and the data's tag before
	// it; meta data, causes, method and event id after it. Events whose
	// fields do not fit are serialized into a buffer of their own.
	reasmHead = 512
	reasmTail = 1024
	// lingerSettle is how long a narrowed-away scope is still received
	// after every peer confirmed the change: what they sent before is
	// delivered or repaired by then (a NACK round is ~10 ms).
	lingerSettle = 250 * time.Millisecond
	// scopeSlots is the size of the per-scope traffic table (a power of
	// two): scopes beyond it, or whose slots a colliding scope took, are
	// summed in its "other" row.
	scopeSlots = 256
	// scopeProbes is how many neighbouring slots a scope may take when its
	// own slot belongs to another scope.
	scopeProbes = 4
)
