package a2a

import "time"

// Limits and timers of the A2A listener.
const (
	// MaxMessageBytes bounds a JSON-RPC request body: an A2A message with
	// its parts inline; files go by URI.
	MaxMessageBytes = 1 << 20

	// MaxIDBytes bounds a request id's JSON: it becomes the frame's id
	// attribute and is echoed in every response.
	MaxIDBytes = 256

	// MaxMethodBytes bounds a method name.
	MaxMethodBytes = 128

	// DefaultCallTimeout bounds the wait for an agent's answer to a
	// request that is not streamed.
	DefaultCallTimeout = 30 * time.Second

	// DefaultStreamTimeout bounds a streamed answer as a whole.
	DefaultStreamTimeout = 10 * time.Minute

	// DefaultWriteTimeout bounds one write to a client; one that does not
	// read for that long loses its stream.
	DefaultWriteTimeout = 10 * time.Second

	// Prefix is the path the JSON-RPC endpoint is served under; the rest
	// of the path is the agent's scope. '.' is not a scope character, so
	// no scope of the CloudEvents gateway beside it is shadowed.
	Prefix = "/.a2a"

	// CardPath is where A2A 0.3 and 1.0 clients look for the agent card;
	// LegacyCardPath is where earlier clients did.
	CardPath       = "/.well-known/agent-card.json"
	LegacyCardPath = "/.well-known/agent.json"
)

// maxAgents bounds the agent scopes a Handler keeps participants for (a
// RemoteServer and a streamcall.Caller each): clients choose the scope
// in the path, and must not make the handler hold without bound.
const maxAgents = 256
