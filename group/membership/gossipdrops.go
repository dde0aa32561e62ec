package membership

import (
	"bytes"
	"log"
	"log/slog"
	"sync/atomic"
)

// malformedGossip are the starts of the lines memberlist logs, as errors
// or warnings, when it drops a packet or stream it could not read: bad
// input on the gossip port, counted as Stats.GossipMalformed. Failures of
// authentication (labels, decryption) are not among them.
var malformedGossip = [][]byte{
	[]byte("UDP packet too short"),
	[]byte("missing message type byte"),
	[]byte("Got invalid checksum"),
	[]byte("msg type ("),
	[]byte("Message type ("),
	[]byte("Received invalid msgType"),
	[]byte("Failed to decode"),
	[]byte("Failed to decompress"),
	[]byte("failed to receive"),
	[]byte("Failed to receive user message"),
	[]byte("Failed to read remote state"),
	[]byte("Remote node state size"),
	[]byte("Compound request had"),
	[]byte("unexpected double"),
}

// newCountingLogger is newMemberlistLogger that also counts in bad the
// lines saying memberlist dropped malformed input.
func newCountingLogger(l *slog.Logger, bad *atomic.Uint64) *log.Logger {
	return log.New(countingWriter{w: slogWriter{l: l}, bad: bad}, "", 0)
}

// countingWriter counts malformed-input lines, then logs them as
// slogWriter does.
type countingWriter struct {
	w   slogWriter
	bad *atomic.Uint64
}

// Write counts and logs one line; it never fails.
func (c countingWriter) Write(p []byte) (int, error) {
	if isMalformedGossip(p) {
		c.bad.Add(1)
	}
	return c.w.Write(p)
}

// isMalformedGossip reports whether line is an error or warning of
// memberlist about input it could not read.
func isMalformedGossip(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("[ERR] memberlist: "))
	if !ok {
		rest, ok = bytes.CutPrefix(line, []byte("[WARN] memberlist: "))
	}
	if !ok {
		return false
	}
	for _, p := range malformedGossip {
		if bytes.HasPrefix(rest, p) {
			return true
		}
	}
	return false
}
