package main

import "time"

// Exit codes of the tools.
const (
	exitOK      = 0
	exitFailure = 1 // an error, including a remote method's error reply
	exitUsage   = 2 // bad command line
	exitTimeout = 3 // rsb call got no reply in time
)

// Limits and defaults of the tools.
const (
	// maxPayload bounds what send reads from stdin or a file: the largest
	// frame rsbd's socket server accepts.
	maxPayload = 64 << 20
	// defaultCallTimeout is how long call waits for a reply.
	defaultCallTimeout = 10 * time.Second
	// defaultDialTimeout bounds connecting to the daemon.
	defaultDialTimeout = 5 * time.Second
	// defaultLoggerQueue bounds the events the logger queues per URI.
	defaultLoggerQueue = 4096
	// hexdumpLimit bounds the payload bytes the detailed style dumps.
	hexdumpLimit = 1024
	// compactPayloadWidth bounds the payload text of the compact style.
	compactPayloadWidth = 60
	// separatorWidth is the length of the detailed style's separator line.
	separatorWidth = 80
	// maxRegexp bounds the pattern of a regex filter.
	maxRegexp = 4096
	// defaultRefresh is how often the monitor and statistics styles print.
	defaultRefresh = time.Second
	// maxStyleScopes bounds the scopes the monitor and timeline styles keep
	// apart; the events of further scopes are counted together.
	maxStyleScopes = 10000
	// columnsScopeWidth, columnsSchemaWidth and columnsPayloadWidth are
	// column widths of the columns style; longer values are clipped.
	columnsScopeWidth   = 32
	columnsSchemaWidth  = 24
	columnsPayloadWidth = 40
	// monitorScopeWidth is the width of the monitor's scope column.
	monitorScopeWidth = 40
	// timelineLanes is the number of scope lanes the timeline style draws.
	timelineLanes = 16
	// maxIDLFiles bounds the .proto files --on-demand-idl-loading tries, as
	// the wire schemas it looks up come from the network.
	maxIDLFiles = 1000
	// maxMessageName bounds the wire schemas looked up as protobuf message
	// names (a received event's schema is not trusted).
	maxMessageName = 1024
	// timelineGap is the pause between events the timeline shows as a line.
	timelineGap = time.Second
)

// keyIntrospection is RSB's switch for introspection (default on). With it
// off, participants are not announced and rsbd sends the tool every event.
const keyIntrospection = "introspection.enabled"

// Timers of rsb introspect's monitor style.
const (
	// monitorRefresh is the longest pause between two redraws of the
	// monitor on a terminal (uptimes and latencies change).
	monitorRefresh = time.Second
	// monitorChanges is how many of the latest changes it shows.
	monitorChanges = 10
)

// defaultWebPort is the port rsb web listens on by default.
const defaultWebPort = 4444
