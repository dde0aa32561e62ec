package mqtt

import (
	"strconv"
	"sync/atomic"
	"time"
)

// positions numbers the messages a receiver reads, for the id of an
// attribute-less message: MQTT has no message id, so the id is
// "<topic>-<n>", n counting from the receiver's start time in
// microseconds, which keeps ids unique across restarts of the bridge.
type positions struct {
	n atomic.Int64
}

// newPositions starts the count at the current time in microseconds.
func newPositions() *positions {
	p := &positions{}
	p.n.Store(time.Now().UnixMicro())
	return p
}

// next returns the position of the next message read on topic.
func (p *positions) next(topic string) string {
	return topic + "-" + strconv.FormatInt(p.n.Add(1), 10)
}
