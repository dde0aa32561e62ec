package node

import (
	"fmt"
	"testing"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// BenchmarkSubscribeWithPeer measures Subscribe on distinct scopes while a
// peer is connected, so that every new scope changes the announced interest
// and waits for the peer to learn it. "subs" is how many subscriptions the
// node already holds.
func BenchmarkSubscribeWithPeer(b *testing.B) {
	for _, c := range []struct{ held, peers int }{{0, 1}, {2000, 1}, {10000, 1}, {10000, 3}} {
		name := fmt.Sprintf("held=%d", c.held)
		if c.peers > 1 {
			name += fmt.Sprintf("/peers=%d", c.peers)
		}
		held := c.held
		b.Run(name, func(b *testing.B) {
			n := startNodes(b, 1+c.peers, nil)[0]
			fn := func(*notification.Event) {}
			for i := range held {
				defer n.Subscribe(scope.MustParse(fmt.Sprintf("/held/%d/", i)), fn)()
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				defer n.Subscribe(scope.MustParse(fmt.Sprintf("/new/%d/", i)), fn)()
			}
		})
	}
}
