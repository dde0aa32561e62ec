package node

import (
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/rttstat"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
)

// BenchmarkSocketRoundTrip measures a ping-pong between two socket clients
// of one node: the pinger sends an event on /bench/ping/, the ponger
// echoes every frame it gets, and the echo (every connection wants
// everything) is the pong; one frame outstanding. Beside rsbsocket's
// BenchmarkRelayRoundTrip it shows what the node adds to a relay. Both
// clients are in the node's process, so no reader polls for an answer.
func BenchmarkSocketRoundTrip(b *testing.B) {
	n := startNodes(b, 1, nil)[0]
	ping, pong := dialSocket(b, n), dialSocket(b, n)
	testutil.WaitFor(b, 10*time.Second, "both connections", func() bool { return n.sock.Stats().ConnsCurrent == 2 })
	body, err := notification.Marshal(testutil.Event("/bench/ping/", 1, make([]byte, 64)))
	if err != nil {
		b.Fatal(err)
	}
	rttstat.PingPong(b, ping, pong, body)
}
