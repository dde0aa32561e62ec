package node

import "time"

// Defaults of Config. Every limit of the node lives here.
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
	// DefaultPublishQueue bounds publish requests waiting for the engine,
	// queued or taken by it and not yet handled (each half; see pubQueue);
	// a full queue blocks the publisher (TCP back-pressure to its client).
	DefaultPublishQueue = 4096
	// DefaultPublishQueueBytes bounds the same requests by their events'
	// bytes (each half; an empty half takes any one event): by count
	// alone, 4096 requests of 1 MiB events held 4 GiB, and a publisher of
	// large events ran ahead into fresh memory at half the rate it gets
	// with this bound (16 MiB, the bench's end-to-end window).
	DefaultPublishQueueBytes = 16 << 20
	// DefaultReceiveQueue bounds batches of received datagrams waiting for
	// the engine; a full queue drops the batch (counted; reliable streams
	// repair it).
	DefaultReceiveQueue = 1024
	// DefaultReceiveQueueBytes bounds the same batches by their datagrams'
	// bytes: 1024 batches of 32 loopback datagrams would hold 2 GiB. A
	// batch that would pass it is dropped like one that finds the queue
	// full (an empty queue takes any one batch).
	DefaultReceiveQueueBytes = 64 << 20
	// DefaultMaxSenders bounds the sender streams (group x class) of this
	// daemon; the least recently used is closed past it.
	DefaultMaxSenders = 4096
	// DefaultSenderIdle frees a sender stream that sent nothing for this
	// long and retains nothing.
	DefaultSenderIdle = 60 * time.Second
	// DefaultReliableAssemblyTimeout is how long a reliable stream's
	// partial event may wait for its fragments (retention + 5 s).
	DefaultReliableAssemblyTimeout = 15 * time.Second
	// DefaultReliablePartialEvents bounds the partial events of all
	// reliable streams together (fragmentation's own default is 16). A
	// reliable stream completes every event it delivers a fragment of, or
	// reports the loss, so a partial event only waits for repairs; while
	// holes wait, every stream can have as many partial events as its
	// sender's flow window has in flight (unordered) or one (ordered),
	// and evicting one would lose an event that was on its way. The bound
	// costs 256 bytes of bookkeeping per partial event; the buffers are
	// bounded by the assembler's byte budget.
	DefaultReliablePartialEvents = 4096
	// DefaultUnreliableAssemblyTimeout is the same for unreliable streams.
	DefaultUnreliableAssemblyTimeout = 2 * time.Second
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
	// flushQuiet is how long the engine must have sent nothing and heard
	// no NACK before Close considers the reliable streams flushed.
	flushQuiet = 50 * time.Millisecond
	// maxOrigins bounds the remembered unicast addresses of sender instances.
	maxOrigins = 4096
	// flowWindowBytes is the flow-control window of a reliable stream: the
	// datagrams in flight to its slowest receiver, in bytes, at most. It
	// stays well under the sender's retention (DefaultRetainBytes) so that
	// what is in flight can still be repaired; flowWindow also keeps it
	// within half of the receive buffer the kernel granted.
	flowWindowBytes = 6 << 20
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
	// skbOverhead is the kernel's per-datagram bookkeeping charged to a
	// receive buffer (sk_buff and shared info), roughly.
	skbOverhead = 768
	// inlineDeliverMax: a socket reader delivers the events it received
	// itself (no hand-off) when they total at most this many bytes; larger
	// ones go to the delivery goroutine, so that the reader returns to its
	// socket at once.
	inlineDeliverMax = 64 << 10
	// borrowInlineMax is inlineDeliverMax for a node whose subscriptions
	// all borrow (WithoutRetention) and that has no socket clients: a
	// reader then delivers a whole receive batch from its buffer, with no
	// copy, rather than copying it out for the delivery goroutine (1 KiB
	// events 0.99 → 1.22 M msg/s, 64 KiB 25 → 28 k msg/s between two
	// processes on a 2-core VM). A slow handler holds up that socket's
	// reader, which back-pressures the senders through the flow window.
	borrowInlineMax = 4 << 20
	// reasmHead and reasmTail are the room kept before and after the data
	// of every reassembled event (fragmentation.Config.Room), where its
	// other Notification fields go when it is serialized for socket
	// clients (frameAround): scope, wire schema and the data's tag before
	// it; meta data, causes, method and event id after it. Events whose
	// fields do not fit are serialized into a buffer of their own.
	reasmHead = 512
	reasmTail = 1024
	// minFlowWindow is the smallest window in datagrams.
	minFlowWindow = 16
	// defaultRetainCount mirrors qos's retention count when unset.
	defaultRetainCount = 16384
	// ackInterval is the longest a receiver waits to ACK progress.
	ackInterval = time.Millisecond
	// ackTimeout drops a receiver that has not ACKed for this long from its
	// sender's window.
	ackTimeout = time.Second
	// maxFlowReceivers bounds the receivers a sender tracks per stream.
	maxFlowReceivers = 1024
	// maxAckStreams bounds the streams a receiver ACKs.
	maxAckStreams = 4096
	// lingerSettle is how long a narrowed-away scope is still received
	// after every peer confirmed the change: what they sent before is
	// delivered or repaired by then (a NACK round is ~10 ms).
	lingerSettle = 250 * time.Millisecond
	// maxWantCache bounds the scopes whose wanted groups the engine caches
	// (emptied when full or when the interest table changes).
	maxWantCache = 65536
	// directGap: a publish that follows the previous one by less than this
	// goes through the engine's queue (and shares datagrams with its
	// neighbours); a sparser one is sent on the publisher's goroutine.
	directGap = 50 * time.Microsecond
	// directSpin is how long a sparse publish waits for the engine to come
	// free before it takes the queue: less than a goroutine wake-up.
	directSpin = 20 * time.Microsecond
	// deliveryHighWater: while deliveries costing more than this wait for
	// the local sinks (handlers slower than the network), the node holds
	// its ACKs, so remote reliable senders stop at their flow window. A
	// delivery costs its bytes and rsbsocket.FrameOverhead, as in a socket
	// client's queue. With the flow window's reserve (ackReserve: 36 MiB
	// for a 6 MiB window of the smallest events) it stays within the 64
	// MiB a socket client's queue takes by default.
	deliveryHighWater = 8 << 20
	// minWireRecord is the least a record carrying an event takes in a
	// DATA datagram: an unfragmented FragmentedNotification around the
	// smallest Notification (event id and scope, 26 bytes). What a flow
	// window holds in frames is at most its bytes over this.
	minWireRecord = 32
	// deliveryMaxBytes: past deliveries costing this much, events of
	// unreliable streams are dropped (counted as queue_full) instead of
	// queued.
	deliveryMaxBytes = 64 << 20
	// deliveryChunkLen is how many deliveries (80 bytes each) one chunk of
	// the delivery queue holds: a burst links chunks of about 20 KiB
	// rather than growing (and copying) one list.
	deliveryChunkLen = 256
	// maxSpareRuns is how many emptied lists of a datagram's pooled
	// buffers the engine keeps for reuse.
	maxSpareRuns = 256
	// maxFreeDatagrams is how many released DATA datagrams, and how many
	// of their record lists, the engine keeps for reuse.
	maxFreeDatagrams = 256
	// gatherMinRecord: a DATA datagram whose records average at least
	// this many bytes is sent with its records gathered by the kernel
	// where they lie (one iovec each, plus one per length prefix) instead
	// of copied into the transmit arena first; smaller records are
	// cheaper to copy than to describe.
	gatherMinRecord = 256
	// maxDrain is how many queued inputs the engine handles before it
	// flushes pending datagrams (batching under load, latency when idle).
	maxDrain = 256
	// maxDrainBytes bounds the same by the events' bytes: a burst of large
	// events is sent a few at a time between the other inputs, so that
	// NACKs and ACKs are answered while it lasts (a receiver gives a hole
	// up after NackTries unanswered NACKs and at least GiveUpAfter).
	maxDrainBytes = 1 << 20
)
