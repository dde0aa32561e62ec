package introspection

import "time"

// Limits and timers of the package. Config fields left at zero take the
// defaults.
const (
	// DefaultResponseTimeout bounds an echo call; a process that does not
	// answer within it is CRASHED. The RSB tools wait one second.
	DefaultResponseTimeout = time.Second
	// DefaultPingInterval is how often the Collector calls the echo
	// method of each known process.
	DefaultPingInterval = time.Second
	// DefaultSurveyInterval is how often the Collector surveys again.
	DefaultSurveyInterval = 10 * time.Second

	// maxHosts, maxProcesses and maxParticipants bound what a DB keeps;
	// Hellos past them are dropped and counted (Stats).
	maxHosts        = 1024
	maxProcesses    = 8192
	maxParticipants = 65536
	// maxField bounds a string field of a Hello kept by the DB (longer
	// ones are cut); maxList bounds its repeated fields (arguments,
	// transports).
	maxField = 1024
	maxList  = 64

	// listenerQueue bounds the Hellos and Byes waiting for the DB; past
	// it the oldest are dropped (a survey repeats them).
	listenerQueue = 4096

	// maxSamples is how many echo samples a tracker keeps for its
	// median.
	maxSamples = 100
	// maxConcurrentPings bounds the echo calls a Collector has
	// outstanding.
	maxConcurrentPings = 16
	// maxRecentChanges bounds the changes a Collector keeps for
	// Changes.
	maxRecentChanges = 256

	// maxDaemonStatus bounds a daemon's status reply accepted by
	// SurveyDaemons, and maxDaemons the replies kept.
	maxDaemonStatus = 1 << 20
	maxDaemons      = 1024
	// maxStatusScopes bounds the scopes a DaemonStatus lists.
	maxStatusScopes = 256
)
