package rsbsocket

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
)

// BenchmarkRelaySpread measures one publisher whose frames go round-robin
// to conns subscriber connections, each a listener on a scope of its own,
// so that every flush of the publisher's reader has as many targets as
// the frames it forwarded reach (up to conns). At most window frames are
// in flight. frames/s counts published frames; all ends share the
// process's two cores.
func BenchmarkRelaySpread(b *testing.B) {
	for _, conns := range []int{4, 10, 100, 1000} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) { benchRelaySpread(b, conns, 1000) })
	}
}

func benchRelaySpread(b *testing.B, conns, window int) {
	s, addr := startServer(b, quietConfig(), nil)
	pub := socktest.Dial(b, addr)
	connOf(b, s, pub)
	go func() { // the subscribers' Hellos reach it
		for {
			if _, err := pub.Recv(); err != nil {
				return
			}
		}
	}()
	bodies := make([][]byte, conns)
	credits := make(chan struct{}, window)
	for range window {
		credits <- struct{}{}
	}
	done := make(chan error, conns)
	for k := range conns {
		sc := fmt.Sprintf("/bench/spread/%05d/", k)
		bodies[k] = socktest.Notification(b, sc, "bytes", bytes.Repeat([]byte{'p'}, 64), 0)
		sub := socktest.Dial(b, addr)
		connOf(b, s, sub)
		socktest.Send(b, sub, socktest.Hello(b, uuid16(k+1), "listener", sc))
		n := b.N / conns
		if k < b.N%conns {
			n++
		}
		go func() {
			for range n {
				_ = sub.SetReadDeadline(time.Now().Add(socktest.Timeout))
				if _, err := sub.Recv(); err != nil {
					done <- err
					return
				}
				credits <- struct{}{}
			}
			done <- nil
		}()
	}
	testutil.WaitFor(b, socktest.Timeout, "interests", func() bool {
		n := 0
		for _, c := range s.Connections() {
			if !c.Interest.All && len(c.Interest.Scopes) == 2 { // and introspection
				n++
			}
		}
		return n >= conns
	})
	const batchSize = 64
	frames := make([][]byte, 0, batchSize)
	b.ReportAllocs()
	st0 := s.Stats()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		<-credits
		frames = append(frames, bodies[i%conns])
		if len(frames) == batchSize || len(credits) == 0 || i == b.N-1 {
			if err := pub.SendMany(frames); err != nil {
				b.Fatal(err)
			}
			frames = frames[:0]
		}
	}
	endRelayBench(b, s, st0, start, done, conns, true)
}
