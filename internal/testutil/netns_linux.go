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
// The thread is moved back and released afterwards. It must not end with
// the goroutine: a daemon started from that thread earlier (with Pdeathsig,
// which follows the parent thread) would be killed with it; only when the
// way back fails is the thread left locked, for the runtime to discard.
func DialInNetns(ctx context.Context, netns, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer home.Close()
		f, err := os.Open("/run/netns/" + netns)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("setns %s: %w", netns, err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}
