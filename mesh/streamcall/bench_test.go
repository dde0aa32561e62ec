package streamcall

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// benchChunks is the answer's length in chunks; benchChunkBytes a chunk's.
const (
	benchChunks     = 100
	benchChunkBytes = 64
)

// BenchmarkStreamedCall measures a streamed call of 100 chunks of 64 B
// between two socket clients of one rsbd daemon: chunks/s and the
// latency of the first chunk (from the call's start). Beside it in the
// same run, the same exchange as plain publish/subscribe over the socket
// transport: a request event, answered by 100 events the caller's
// listener receives.
func BenchmarkStreamedCall(b *testing.B) {
	d := clienttest.StartDaemons(b, 1)[0]
	dialBus := func() *client.Bus {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		bus, err := client.Dial(ctx, d.URI())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = bus.Close() })
		return bus
	}
	server, caller := dialBus(), dialBus()
	b.Run("streamcall", func(b *testing.B) { benchStreamCall(b, server, caller) })
	b.Run("socket-pubsub", func(b *testing.B) { benchPubSub(b, server, caller) })
}

// report reports chunks/s and the first chunk's latencies.
func report(b *testing.B, firsts []time.Duration) {
	b.ReportMetric(float64(b.N*benchChunks)/b.Elapsed().Seconds(), "chunks/s")
	slices.Sort(firsts)
	b.ReportMetric(float64(firsts[len(firsts)/2].Nanoseconds())/1e3, "first-p50-µs")
	b.ReportMetric(float64(firsts[len(firsts)*99/100].Nanoseconds())/1e3, "first-p99-µs")
}

func benchStreamCall(b *testing.B, server, caller *client.Bus) {
	chunk := make([]byte, benchChunkBytes)
	s, err := Serve(server, scope.MustParse("/bench/sc/"), func(ctx context.Context, req *Request, w *Writer) error {
		for range benchChunks {
			if err := w.Write(ctx, chunk); err != nil {
				return err
			}
		}
		return nil
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c, err := NewCaller(caller, scope.MustParse("/bench/sc/"), CallerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	firsts := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		start := time.Now()
		st, err := c.Call(ctx, Request{Prompt: []byte("go")})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for ch, err := range st.Chunks() {
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				firsts = append(firsts, time.Since(start))
			}
			if !ch.Done {
				n++
			}
		}
		cancel()
		if n != benchChunks {
			b.Fatalf("%d chunks", n)
		}
	}
	b.StopTimer()
	report(b, firsts)
}

func benchPubSub(b *testing.B, server, caller *client.Bus) {
	reqSc, repSc := scope.MustParse("/bench/ps/req/"), scope.MustParse("/bench/ps/rep/")
	answer, err := server.NewInformer(repSc)
	if err != nil {
		b.Fatal(err)
	}
	defer answer.Close()
	chunk := make([]byte, benchChunkBytes)
	sl, err := server.NewListener(reqSc)
	if err != nil {
		b.Fatal(err)
	}
	defer sl.Close()
	sl.AddHandler(func(*client.Event) error {
		for range benchChunks {
			ev := &client.Event{}
			ev.Data, ev.WireSchema = chunk, notification.SchemaBytes
			if err := answer.PublishEvent(context.Background(), ev); err != nil {
				return err
			}
		}
		return nil
	})
	got := make(chan struct{}, benchChunks)
	cl, err := caller.NewListener(repSc, client.WithInlineDelivery())
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	cl.AddHandler(func(*client.Event) error { got <- struct{}{}; return nil })
	ask, err := caller.NewInformer(reqSc)
	if err != nil {
		b.Fatal(err)
	}
	defer ask.Close()
	firsts := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := ask.Publish(context.Background(), []byte("go")); err != nil {
			b.Fatal(err)
		}
		for i := range benchChunks {
			select {
			case <-got:
			case <-time.After(20 * time.Second):
				b.Fatalf("event %d lost", i)
			}
			if i == 0 {
				firsts = append(firsts, time.Since(start))
			}
		}
	}
	b.StopTimer()
	report(b, firsts)
}
