package redis_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
)

var benchRun atomic.Int64

// benchServer starts one redis-server without persistence for a
// benchmark.
func benchServer(b *testing.B) *bridgetest.Server {
	return bridgetest.StartServer(b, "redis-server", "redis-server", func(port, dir string) []string {
		return []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}
	})
}

// fill adds n binary entries of BenchSize to stream with go-redis, in
// pipelines of 256.
func fill(b *testing.B, s *bridgetest.Server, stream string, n int) {
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr()})
	defer c.Close()
	ctx := context.Background()
	for i := 0; i < n; i += 256 {
		p := c.Pipeline()
		for j := i; j < min(n, i+256); j++ {
			p.XAdd(ctx, &goredis.XAddArgs{Stream: stream, Values: fields(nil, bridge.FormatBinary, bridgetest.Event(j, bridgetest.BenchSize))})
		}
		if _, err := p.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOut: bus → Redis stream through the bridge, beside go-redis
// adding the same entries directly.
func BenchmarkOut(b *testing.B) {
	b.Run("bridge", func(b *testing.B) {
		s := benchServer(b)
		cfg := config(s, "bench-out", "stream", bridge.FormatBinary)
		cfg.Out = bridge.Route{Scope: "/bench/", Address: fmt.Sprintf("bench%d", benchRun.Add(1))}
		bridgetest.BenchOut(b, bridgetest.Bus(b), cfg)
	})
	b.Run("direct", func(b *testing.B) {
		s := benchServer(b)
		stream := fmt.Sprintf("bench%d", benchRun.Add(1))
		bridgetest.Direct(b, func(n int) { fill(b, s, stream, n) })
	})
}

// BenchmarkIn: Redis stream → bus through the bridge, beside go-redis
// reading the same entries in a group and acknowledging each.
func BenchmarkIn(b *testing.B) {
	b.Run("bridge", func(b *testing.B) {
		s := benchServer(b)
		cfg := config(s, "bench-in", "stream", bridge.FormatBinary)
		cfg.In = bridge.Route{Scope: "/bench/", Address: fmt.Sprintf("bench%d", benchRun.Add(1))}
		bridgetest.BenchIn(b, bridgetest.Bus(b), cfg, func(n int) { fill(b, s, cfg.In.Address, n) })
	})
	b.Run("direct", func(b *testing.B) {
		s := benchServer(b)
		stream := fmt.Sprintf("bench%d", benchRun.Add(1))
		fill(b, s, stream, b.N)
		bridgetest.Direct(b, func(n int) {
			c := goredis.NewClient(&goredis.Options{Addr: s.Addr()})
			defer c.Close()
			ctx := context.Background()
			if err := c.XGroupCreate(ctx, stream, "direct", "0").Err(); err != nil {
				b.Fatal(err)
			}
			for got := 0; got < n; {
				res, err := c.XReadGroup(ctx, &goredis.XReadGroupArgs{Group: "direct", Consumer: "c",
					Streams: []string{stream, ">"}, Count: 256, Block: 500 * time.Millisecond}).Result()
				if err != nil {
					b.Fatal(err)
				}
				for _, m := range res[0].Messages {
					got++
					if err := c.XAck(ctx, stream, "direct", m.ID).Err(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	})
}
