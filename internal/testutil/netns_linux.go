package testutil

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// DialInNetns connects to addr from inside network namespace netns (as made
// by "ip netns add", /run/netns/NAME): the socket is created on a thread
// moved into the namespace, and keeps working from any thread once made.
// The thread is locked and never unlocked, so the runtime discards it
// instead of reusing it in the wrong namespace.
func DialInNetns(ctx context.Context, netns, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/run/netns/" + netns)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("setns %s: %w", netns, err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}
