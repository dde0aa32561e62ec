package sockclient

import "time"

// Defaults of ClientConfig and the size of the read buffer.
const (
	// defaultHandshakeTimeout bounds the wait for the server's greeting: a
	// server greets at once, so a client that has waited this long is
	// talking to something else or to a server that is stuck.
	defaultHandshakeTimeout = 5 * time.Second

	// defaultCloseTimeout bounds Close's wait for the server's EOF, long
	// enough for a server to write what it still has queued for the
	// client, short enough that a vanished server does not hold Close.
	defaultCloseTimeout = 5 * time.Second

	// readBufferSize is the bufio.Reader size of a ClientConn: it reads
	// many small frames per system call; a body larger than the buffer is
	// read straight into its own memory.
	readBufferSize = 64 << 10
)
