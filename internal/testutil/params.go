package testutil

import "time"

// PollEvery is how often WaitFor checks its condition: short enough that a
// test waits little past the moment the condition holds, long enough that
// the poll does not steal the CPU the code under test needs.
const PollEvery = 2 * time.Millisecond

// Deadlines and limits of the daemon starter: generous, since two cores may
// run a race-detected test binary and several daemons at once.
const (
	// DaemonStartTimeout bounds the wait for a started daemon's ready file;
	// rsbd is ready in well under a second when the machine is idle.
	DaemonStartTimeout = 20 * time.Second
	// DaemonStopTimeout bounds the wait for a daemon to exit after SIGTERM
	// (before SIGKILL follows), SIGKILL or SIGQUIT. It matches rsbd's own
	// shutdown deadline, so an orderly but slow exit is not cut short.
	DaemonStopTimeout = 15 * time.Second
	// ReadyPollEvery is how often Start reads the ready file: a daemon's
	// start takes tens of milliseconds at least, and a slower poll leaves
	// the CPU to the daemons starting.
	ReadyPollEvery = 10 * time.Millisecond
	// HTTPTimeout bounds one request to a daemon's HTTP endpoints; a loaded
	// daemon answers a scrape in milliseconds, so only a hung one takes it.
	HTTPTimeout = 10 * time.Second
	// MaxHTTPBody bounds what Get reads of an answer: /metrics is some tens
	// of kilobytes, and the bound keeps a broken endpoint from filling the
	// test's memory.
	MaxHTTPBody = 16 << 20
	// LogTailLines is how many of a daemon's last log lines its cleanup
	// shows when the test failed: enough for the events before the failure,
	// few enough that the logs of several daemons stay readable.
	LogTailLines = 60
	// StackTailLines is how much of a hung daemon's goroutine dump Stacks
	// returns: the dump of a busy daemon runs to a few thousand lines.
	StackTailLines = 1500
)
