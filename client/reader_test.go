package client

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
)

// TestReader covers reads across nodes, timeouts and Close.
func TestReader(t *testing.T) {
	forEnvs(t, 2, func(t *testing.T, e env) {
		a, b := e.connect(t, 0), e.connect(t, 1)
		sc := mustScope("/reader/" + e.name + "/")
		awaitRoute(t, a, b, sc)
		rd, err := b.NewReader(sc)
		if err != nil {
			t.Fatal(err)
		}
		for {
			ctx, cancel := context.WithTimeout(bg(), 50*time.Millisecond)
			ev, err := rd.Read(ctx)
			cancel()
			if err == nil && ev.Method == probeMethod {
				continue // a probe of awaitRoute's that was still on its way
			}
			if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("read on empty reader: %v, want ErrTimeout", err)
			}
			break
		}
		inf, _ := a.NewInformer(sc)
		if _, err := inf.Publish(bg(), "x"); err != nil {
			t.Fatal(err)
		}
		if ev := readSkippingProbes(t, rd, 10*time.Second); ev.Payload != "x" {
			t.Fatalf("read %v", ev.Payload)
		}
		done := make(chan error, 1)
		go func() { _, err := rd.Read(bg()); done <- err }()
		rd.Close()
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Fatalf("read blocked across Close: %v, want ErrClosed", err)
		}
		if _, err := rd.Read(bg()); !errors.Is(err, ErrClosed) {
			t.Fatalf("read after Close: %v", err)
		}
		rd.Close()
	})
}

// TestReaderDropPolicy fills a small queue from a local informer (delivered
// synchronously in every environment) and checks what each policy keeps.
func TestReaderDropPolicy(t *testing.T) {
	forEnvs(t, 1, func(t *testing.T, e env) {
		for _, tc := range []struct {
			policy DropPolicy
			want   []int64
		}{{DropNewest, []int64{0, 1}}, {DropOldest, []int64{3, 4}}} {
			t.Run(fmt.Sprint(tc.policy), func(t *testing.T) {
				b := e.connect(t, 0)
				sc := mustScope(fmt.Sprintf("/drop/%s/%d/", e.name, tc.policy))
				rd, err := b.NewReader(sc, WithQueue(2, tc.policy))
				if err != nil {
					t.Fatal(err)
				}
				inf, _ := b.NewInformer(sc)
				for i := range 5 {
					if _, err := inf.Publish(bg(), int64(i)); err != nil {
						t.Fatal(err)
					}
				}
				for _, w := range tc.want {
					ctx, cancel := context.WithTimeout(bg(), 5*time.Second)
					ev, err := rd.Read(ctx)
					cancel()
					if err != nil || ev.Payload != w {
						t.Fatalf("read %v %v, want %d", ev, err, w)
					}
				}
				if st := rd.Stats(); st.Dropped != 3 || st.Pending != 0 {
					t.Fatalf("stats %+v, want 3 dropped", st)
				}
			})
		}
	})
}

// TestHandlerFailures checks that errors and panics of handlers are counted
// and the listener keeps delivering.
func TestHandlerFailures(t *testing.T) {
	forEnvs(t, 1, func(t *testing.T, e env) {
		b := e.connect(t, 0)
		sc := mustScope("/handlers/" + e.name + "/")
		l, err := b.NewListener(sc)
		if err != nil {
			t.Fatal(err)
		}
		l.AddHandler(func(ev *Event) error {
			switch ev.Payload {
			case "panic":
				panic("boom")
			case "error":
				return errors.New("failed")
			}
			return nil
		})
		got := make(chan any, 8)
		remove := l.AddHandler(func(ev *Event) error { got <- ev.Payload; return nil })
		inf, _ := b.NewInformer(sc)
		for _, v := range []string{"panic", "error", "fine"} {
			if _, err := inf.Publish(bg(), v); err != nil {
				t.Fatal(err)
			}
		}
		for _, want := range []string{"panic", "error", "fine"} {
			select {
			case v := <-got:
				if v != want {
					t.Fatalf("second handler got %v, want %s", v, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("second handler not called")
			}
		}
		st := l.Stats()
		if st.Panics != 1 || st.Errors != 1 || st.Handled != 6 {
			t.Fatalf("stats %+v", st)
		}
		remove()
		inf.Publish(bg(), "after")
		testutil.WaitFor(t, 10*time.Second, "handled", func() bool { return l.Stats().Handled == 7 })
		if len(got) != 0 {
			t.Fatal("removed handler still called")
		}
	})
}

// TestClose checks idempotent Close and ErrClosed after it.
func TestClose(t *testing.T) {
	forEnvs(t, 1, func(t *testing.T, e env) {
		b := e.connect(t, 0)
		sc := mustScope("/close/")
		inf, _ := b.NewInformer(sc)
		l, _ := b.NewListener(sc)
		rs, _ := b.NewRemoteServer(sc)
		ls, _ := b.NewLocalServer(sc)
		if err := inf.Close(); err != nil {
			t.Fatal(err)
		}
		inf.Close()
		if _, err := inf.Publish(bg(), "x"); !errors.Is(err, ErrClosed) {
			t.Fatalf("publish after close: %v", err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		b.Close()
		l.Close()
		ls.Close()
		if _, err := rs.Call(bg(), "m", nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("call after bus close: %v", err)
		}
		if err := ls.AddMethod("m", func(context.Context, *Event) (any, error) { return nil, nil }); !errors.Is(err, ErrClosed) {
			t.Fatalf("AddMethod after close: %v", err)
		}
		if _, err := b.NewInformer(sc); !errors.Is(err, ErrClosed) {
			t.Fatalf("NewInformer after close: %v", err)
		}
		if _, err := b.NewReader(sc); !errors.Is(err, ErrClosed) {
			t.Fatalf("NewReader after close: %v", err)
		}
	})
}

// TestReaderQueueBytes: a reader's queue bounded in bytes takes large
// events from another Bus until their weight reaches the bound and counts
// the rest as dropped for bytes.
func TestReaderQueueBytes(t *testing.T) {
	forEnvs(t, 2, func(t *testing.T, e env) {
		a, b := e.connect(t, 0), e.connect(t, 1)
		sc := mustScope("/queuebytes/" + e.name + "/")
		route := awaitRouteReader(t, a, b, sc)
		const size, n = 100_000, 6
		weight := int64(size + queueEventOverhead)
		rd, err := b.NewReader(sc, WithQueueBytes(2*weight+weight/2), WithFilter(func(ev *notification.Event) bool {
			return ev.Method != probeMethod // a late probe of awaitRoute's
		}))
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		route.Close() // its interest covered rd's until the server learnt it
		inf, _ := a.NewInformer(sc)
		for range n {
			if _, err := inf.Publish(bg(), make([]byte, size)); err != nil {
				t.Fatal(err)
			}
		}
		testutil.WaitFor(t, 10*time.Second, "every event queued or dropped", func() bool {
			st := rd.Stats()
			return st.Queued+st.Dropped == n
		})
		st := rd.Stats()
		if st.Pending != 2 || st.Dropped != n-2 || st.DroppedForBytes != n-2 || st.PendingBytes != 2*weight {
			t.Fatalf("stats %+v: want 2 pending (%d bytes), %d dropped for bytes", st, 2*weight, n-2)
		}
		for range 2 {
			if ev := readSkippingProbes(t, rd, 5*time.Second); len(ev.Payload.([]byte)) != size {
				t.Fatalf("read %T of %d bytes", ev.Payload, len(ev.Payload.([]byte)))
			}
		}
		if st := rd.Stats(); st.PendingBytes != 0 {
			t.Fatalf("%d bytes pending after the reads", st.PendingBytes)
		}
	})
}

// TestQueueBoundsChecked: negative bounds are configuration errors.
func TestQueueBoundsChecked(t *testing.T) {
	b := dialNode(t, clienttest.StartNodes(t, 1)[0].SocketAddr().String())
	sc := mustScope("/bounds/")
	if _, err := b.NewReader(sc, WithQueueBytes(-1)); !errors.Is(err, ErrConfig) {
		t.Fatalf("NewReader with negative bytes: %v", err)
	}
	if _, err := b.NewListener(sc, WithQueue(-1, DropNewest)); !errors.Is(err, ErrConfig) {
		t.Fatalf("NewListener with negative size: %v", err)
	}
	if _, err := b.NewLocalServer(sc, WithQueueBytes(-5)); !errors.Is(err, ErrConfig) {
		t.Fatalf("NewLocalServer with negative bytes: %v", err)
	}
	if err := (Config{QueueBytes: -1}).Validate(); !errors.Is(err, ErrConfig) {
		t.Fatalf("Config.Validate with negative QueueBytes: %v", err)
	}
}
