package node

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
)

// ErrSocketInUse reports that Config.SocketPath is a socket another
// process serves.
var ErrSocketInUse = errors.New("node: socket path in use")

// listenUnix listens on the Unix socket path. A socket file nobody serves
// (a daemon that died left it) is replaced; a served one is ErrSocketInUse,
// and a file of another kind is left alone and refused. The listener
// removes the file when it closes. The file gets mode (socketFileMode
// when zero).
func listenUnix(path string, mode fs.FileMode) (net.Listener, error) {
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if mode == 0 {
		mode = socketFileMode
	}
	if err := os.Chmod(path, mode); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("unix socket %s: %w", path, err)
	}
	return ln, nil
}

// removeStaleSocket removes path if it is a socket that refuses
// connections.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("unix socket %s: exists and is not a socket", path)
	}
	c, err := net.DialTimeout("unix", path, staleSocketProbe)
	if err == nil {
		_ = c.Close()
		return fmt.Errorf("%w: %s", ErrSocketInUse, path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("unix socket %s: probing the existing socket: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("unix socket %s: removing the stale socket: %w", path, err)
	}
	return nil
}
