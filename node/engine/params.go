package engine

import "time"

// Limits of the engine. The defaults of Config are exported; the rest are
// fixed. Where a measurement chose a value, docs/TUNING.md shows it.
const (
	// DefaultMaxDatagram is the datagram size of a zero Config: the
	// loopback size, where large datagrams move big events with few
	// system calls. A node sets its own by interface.
	DefaultMaxDatagram = 60000
	// minDatagram is the smallest datagram size: a DATA datagram must
	// carry a record of a useful size after its header.
	minDatagram = 512
	// DefaultPublishQueue bounds publish requests waiting for the engine,
	// queued or taken by it and not yet handled (each half; see pubQueue);
	// a full queue blocks the publisher (TCP back-pressure to its client).
	DefaultPublishQueue = 4096
	// DefaultPublishQueueBytes bounds the same requests by their events'
	// bytes (each half; an empty half takes any one event): by count
	// alone, requests of large events held gigabytes, and a publisher of
	// large events ran ahead into fresh memory. 16 MiB is the bench's
	// end-to-end window.
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
	// flushQuiet is how long the engine must have sent nothing and heard
	// no NACK before Flush considers the reliable streams flushed.
	flushQuiet = 50 * time.Millisecond
	// maxOrigins bounds the remembered unicast addresses of sender instances.
	maxOrigins = 4096
	// flowWindowBytes is the flow-control window of a reliable stream: the
	// datagrams in flight to its slowest receiver, in bytes, at most. It
	// stays well under the sender's retention so that what is in flight
	// can still be repaired; FlowWindow also keeps it within half of the
	// receive buffer the kernel granted.
	flowWindowBytes = 6 << 20
	// skbOverhead is the kernel's per-datagram bookkeeping charged to a
	// receive buffer (sk_buff and shared info), roughly.
	skbOverhead = 768
	// MinFlowWindow is the smallest flow-control window in datagrams: a
	// stream with less in flight could not keep a receiver busy.
	MinFlowWindow = 16
	// defaultRetainCount mirrors qos's retention count when unset.
	defaultRetainCount = 16384
	// ackInterval is the longest a receiver waits to ACK progress of less
	// than a quarter window (more is ACKed at once). Every ACK is a
	// datagram and a wake-up of the sender's unicast reader; a sender that
	// far from its window loses nothing by hearing of progress later.
	ackInterval = 10 * time.Millisecond
	// ackTimeout drops a receiver that has not ACKed for this long from its
	// sender's window.
	ackTimeout = time.Second
	// maxFlowReceivers bounds the receivers a sender tracks per stream.
	maxFlowReceivers = 1024
	// maxAckStreams bounds the streams a receiver ACKs.
	maxAckStreams = 4096
	// maxWantCache bounds the scopes whose wanted groups the engine caches
	// (emptied when full or when the interest table changes).
	maxWantCache = 65536
	// directGap: a publish that follows the previous one by less than this
	// goes through the engine's queue (and shares datagrams with its
	// neighbours); a sparser one is sent on the publisher's goroutine.
	directGap = 50 * time.Microsecond
	// deliveryHighWater: while deliveries costing more than this wait for
	// the local sinks (handlers slower than the network), the engine holds
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
	// statsEvery is how often the engine folds its machines' counters into
	// the metrics.
	statsEvery = 100 * time.Millisecond
)
