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
	for _, held := range []int{0, 2000, 10000} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) {
			n := startNodes(b, 2, nil)[0]
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
