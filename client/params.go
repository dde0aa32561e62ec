package client

import (
	"time"

	"github.com/rsbd/rsbd/scope"
)

// Limits and timers of the client. Config and option fields left at zero take
// these defaults.
const (
	// DefaultHost is the host Dial connects to when the URI names none: the
	// local daemon.
	DefaultHost = "localhost"

	// DefaultPort is the RSB socket transport's port.
	DefaultPort = 55555

	// DefaultQueueSize bounds the events waiting in one participant's queue
	// (Listener, Reader, each LocalServer method). Past it events are
	// dropped by the participant's DropPolicy and counted.
	DefaultQueueSize = 1024

	// DefaultQueueBytes bounds what the events waiting in one
	// participant's queue weigh together (their data, and
	// queueEventOverhead each): past it events are dropped as past
	// DefaultQueueSize, and counted apart. An event heavier than the
	// bound alone is still queued when the queue is empty. Without it a
	// queue of DefaultQueueSize events of the largest frame the socket
	// takes could hold gigabytes.
	DefaultQueueBytes = 64 << 20
	// queueEventOverhead is what a queued event weighs besides its data:
	// the event, its meta data and its share of the queue's ring.
	queueEventOverhead = 256

	// sharedInfosMax is the most user infos of a published event a link
	// remembers to share with the next event carrying the same (detacher):
	// a stream's events carry a few; longer lists are copied per event.
	sharedInfosMax = 4

	// queueInitial is the number of events a participant's queue has room
	// for at first; it doubles as events pile up, to the queue's bound.
	queueInitial = 16

	// DefaultCallTimeout bounds a RemoteServer call whose context has no
	// deadline (RSB's remote servers default to 25 seconds).
	DefaultCallTimeout = 25 * time.Second

	// maxAnnouncedMethods bounds the methods a RemoteServer announces to
	// introspection; calls of further methods work, unannounced.
	maxAnnouncedMethods = 1024

	// maxPendingCalls bounds the calls one RemoteServer waits for at once;
	// past it Call fails with ErrTooManyCalls instead of growing the table.
	maxPendingCalls = 65536

	// maxHostLen bounds a host name in a URI (the DNS limit).
	maxHostLen = 253
	// maxSocketPath bounds a Unix socket path in a URI (sun_path holds 108
	// bytes with the terminating NUL).
	maxSocketPath = 107

	// maxProcRead bounds what introspection reads from one /proc or /etc
	// file (cpuinfo, machine-id, stat).
	maxProcRead = 64 << 10

	// sendQueueBytes bounds what a socket link holds queued for its writer,
	// each frame charged its body and rsbsocket.FrameOverhead (64 bytes);
	// past it a publisher waits (a larger event alone passes).
	sendQueueBytes = 4 << 20
	// inlineGapMicros is how long (µs) a socket link's publishes must have
	// paused for the next one, when nothing is queued, to be offered to
	// the socket on the publisher's goroutine (see sender): publishes in a
	// loop, closer than this, are queued and written in batches.
	inlineGapMicros = 20
	// recvSlabBytes is the size of the slabs a socket link reads frame
	// bodies into, one after the other: one allocation for many small
	// events instead of one each. A slab lives as long as any event whose
	// data lies in it.
	recvSlabBytes = 1 << recvSlabShift
	// recvSlabMin is the least room left in a slab for the next frame to
	// be read into it; with less, a new slab is taken. A larger frame that
	// does not fit gets memory of its own, and one that a new slab would
	// have held retires the slab.
	recvSlabMin = 1 << 10
	// recvSlabPool is how many slabs whose events were all given back
	// (WithoutRetention) a socket link keeps for reuse: 1 MiB.
	recvSlabPool = 64
	// recvSlabShift is log2(recvSlabBytes).
	recvSlabShift = 14
	// recvLargeMax is the largest body read into a reusable large slab
	// (of its size class); larger ones get memory of their own.
	recvLargeMax = 4 << 20
	// recvLargeClasses counts the large slabs' size classes: four steps
	// per power of two, 20 KiB, 24 KiB, 28 KiB, 32 KiB, 40 KiB, ...
	// recvLargeMax.
	recvLargeClasses = 32
	// recvLargePoolBytes bounds the large slabs a socket link keeps for
	// reuse (each size class keeps at least one).
	recvLargePoolBytes = 16 << 20
	// sendArenaBytes is the size of the arenas a socket link encodes small
	// events into, one after the other (one allocation for many frames);
	// sendArenaFrame is the largest encoding that goes into one, larger
	// ones get memory of their own.
	sendArenaBytes = 64 << 10
	sendArenaFrame = 8 << 10
	// sendArenaSpare is how many arenas whose frames were all written a
	// socket link keeps for the next ones (1 MiB), until its writer
	// goroutine ends after sendIdle without events.
	sendArenaSpare = 16
	// QuickBudget is how long the handlers of an event a socket link's
	// reader delivered to an idle listener itself (see Listener) may run
	// without that listener's next events going through its queue
	// instead (quickSkipMax): what a handler may hold up the connection's
	// other events. It leaves room for a handler that publishes (a write
	// to a loopback socket includes the kernel handing the data to the
	// reader) and for being preempted once.
	QuickBudget = 250 * time.Microsecond
	// quickTick is the period of a socket link's watch over the handlers
	// its reader runs: one running over a tick (quickTick to twice that)
	// hands the reading on to another goroutine. The waits the package
	// knows need the reader (a RemoteServer call's reply, a Reader's next
	// event) hand it on at once (Bus.handOnReading), so the tick is for
	// handlers that compute long or wait for other handlers: as long as
	// the runtime lets a goroutine run before it preempts it. Each tick
	// starts a goroutine and wakes a thread, CPU that round trips through
	// quick delivery pay in proportion to the tick rate; a long tick costs
	// only a handler that runs long, which then holds the connection's
	// other events up to two ticks (docs/TUNING.md).
	quickTick = 10 * time.Millisecond
	// quickSkipMax is the most events of a listener that go through its
	// queue after its handlers ran longer than QuickBudget for an event
	// the reader delivered itself (one after a first such run, twice as
	// many after each further one in a row).
	quickSkipMax = 64

	// eventBatch is how many events a socket link's reader takes from its
	// stash of given-back events at a time, and a listener's goroutine
	// takes from its queue and gives back at a time.
	eventBatch = 64
	// eventStashMax bounds the given-back events a socket link keeps for
	// its reader (256 KiB of 256-byte events); more, given back after a
	// listener fell behind, go to the shared pool (sync.Pool) that the
	// collector trims.
	eventStashMax = 1024
	// clockRebase is how long the package derives timestamps from the
	// monotonic clock before it reads the wall clock again (see clock).
	clockRebase = time.Millisecond
	// poolIdle is how long a socket link's pools of receive slabs, send
	// buffers and given-back events keep what they hold without anybody
	// taking from them.
	poolIdle = 2 * time.Second
	// sendBufPoolBytes bounds the buffers of larger frames, above
	// recvSlabBytes, a socket link keeps for reuse once they are written
	// (by the size classes of the large receive slabs).
	sendBufPoolBytes = 8 << 20
	// sendIdle is how long a link's writer goroutine waits for more events
	// before it ends (the next burst starts another).
	sendIdle = 100 * time.Millisecond
	// closeFlushTimeout bounds how long Close waits for the queued events to
	// be written before it closes the connection anyway (they are counted
	// in BusStats.Unsent).
	closeFlushTimeout = 5 * time.Second

	// dispatchDepths is the number of depth counters of a socket link's
	// listener index; scopes with more components share the last one.
	dispatchDepths = 16
	// dispatchSmall is the most listeners a socket link scans in a list
	// instead of its index: below it a scan costs less than the index's
	// lock and lookups (BenchmarkDispatch).
	dispatchSmall = 4

	// surveyQueue bounds the introspection surveys waiting for an answer;
	// surveys past it are dropped (the surveyor sees the earlier answer).
	surveyQueue = 16
)

// Introspection constants of the RSB specification.
const (
	// MethodRequest is the method of an RPC request.
	MethodRequest = "REQUEST"
	// MethodReply is the method of an RPC reply.
	MethodReply = "REPLY"
	// MethodSurvey is the method of an introspection survey.
	MethodSurvey = "SURVEY"

	// EchoMethod is the method of a process's introspection echo server.
	EchoMethod = "echo"
	// UserTimeRequestSend and UserTimeRequestReceive are the user times
	// of an echo reply: the request's send time (the caller's clock) and
	// receive time (the answering process's clock).
	UserTimeRequestSend    = "request.send"
	UserTimeRequestReceive = "request.receive"
	// ErrorInfoKey is the user-info key that marks an RPC reply as an error.
	ErrorInfoKey = "rsb:error?"

	// rsbVersion is the RSB version announced in introspection Hellos: the
	// protocol release whose wire format rsbd speaks.
	rsbVersion = "0.19.0"
)

// Participant kinds as RSB introspection names them.
const (
	KindInformer     = "informer"
	KindListener     = "listener"
	KindReader       = "reader"
	KindLocalServer  = "local-server"
	KindRemoteServer = "remote-server"
	// KindLocalMethod and KindRemoteMethod are the methods of servers,
	// announced with their server as parent, each with a listener and an
	// informer of its own as children.
	KindLocalMethod  = "local-method"
	KindRemoteMethod = "remote-method"
)

// IntrospectionHostsScope is the root of the processes' echo servers,
// /__rsb/introspection/hosts/<HOST-ID>/<PID>/ (IntrospectionProcessScope).
var IntrospectionHostsScope = scope.MustParse("/__rsb/introspection/hosts/")
