package testutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// ReadyInfo is the ready file rsbd writes once serving (--ready-file): the
// addresses it bound, so a test can start it on ports the kernel picks.
// It has every field rsbd writes (cmd/rsbd's tests check that it does).
type ReadyInfo struct {
	// PID is the daemon's process id; Start waits for the file whose PID is
	// its process's, not a stale one.
	PID int `json:"pid"`
	// Version is the daemon's version string.
	Version string `json:"version"`
	// Socket is the RSB socket server's host:port; "" when it is off.
	Socket string `json:"socket,omitempty"`
	// SocketPath is the daemon's Unix socket (--socket-path), if any.
	SocketPath string `json:"socket_path,omitempty"`
	// Gossip is the memberlist host:port.
	Gossip string `json:"gossip"`
	// Data is the data transport's host:port.
	Data string `json:"data"`
	// Metrics is the host:port of /metrics, /livez and /readyz; "" when
	// they are off.
	Metrics string `json:"metrics,omitempty"`
	// Gateway is the CloudEvents gateway's HTTP host:port; "" when it is
	// off.
	Gateway string `json:"gateway,omitempty"`
	// MeshMessage is the meshmessage listener's TCP host:port; "" when it
	// is off.
	MeshMessage string `json:"meshmessage,omitempty"`
	// Web is the introspection page's host:port (--web-addr); "" when it
	// is off.
	Web string `json:"web,omitempty"`
}

// readReady reads the ready file at path and reports whether it is whole
// and written by process pid.
func readReady(path string, pid int) (ReadyInfo, bool) {
	var info ReadyInfo
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &info) != nil {
		return ReadyInfo{}, false
	}
	return info, info.PID == pid
}

// ErrExited is what an ExitedError wraps: the daemon exited before it was
// ready.
var ErrExited = errors.New("exited before it was ready")

// ExitedError is Start's error for a daemon that exited before it was
// ready; errors.Is(err, ErrExited) holds for it.
type ExitedError struct {
	// Name is the daemon's.
	Name string
	// Err is the process's exit (an *exec.ExitError, usually).
	Err error
	// Output is what the process printed, on stdout and stderr.
	Output string
}

// Error names the daemon and its exit and shows its output.
func (e *ExitedError) Error() string {
	return fmt.Sprintf("%s %v (%v):\n%s", e.Name, ErrExited, e.Err, e.Output)
}

// Unwrap returns ErrExited.
func (e *ExitedError) Unwrap() error { return ErrExited }
