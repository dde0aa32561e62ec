package sockio

// Sizes of the write paths.
const (
	// coalesceBytes is the capacity of a write's scratch buffer, into
	// which small frames queued together are copied to leave in one
	// write. Writers borrow it from a pool for one write, so an idle
	// connection holds none.
	coalesceBytes = 64 << 10

	// CopyMax is the largest body copied into the scratch buffer; a larger
	// one costs more to copy than an iovec of its own, so it goes to the
	// kernel from its own memory in the same writev, right after its
	// header.
	CopyMax = 16 << 10

	// maxBatchVecs bounds the iovecs of one writev.
	maxBatchVecs = 64

	// MaxBatchBytes stops adding frames to a writev once this many body
	// bytes are in it; a larger frame goes alone, and a server writes it in
	// pieces of this size. A server releases each write from its send
	// queue's bounds, so a client that reads slowly but steadily frees
	// room at least every MaxBatchBytes, whatever the frame size.
	MaxBatchBytes = 256 << 10

	// UnixSocketBuffer is the kernel send buffer asked for on both ends of
	// a Unix socket connection (the kernel caps it at net.core.wmem_max).
	// A Unix stream socket's bytes in flight are bounded by its sender's
	// buffer, 208 KiB by default, so a large frame would cross in many
	// wake-ups (docs/TUNING.md).
	UnixSocketBuffer = 4 << 20
)
