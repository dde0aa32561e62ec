package redis_test

import (
	"context"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	_ "github.com/rsbd/rsbd/bridge/redis"
)

// startServer starts Debian's redis-server on a free port with an
// append-only file synced on every write, so a restart keeps every
// acknowledged entry; killed at the end of the test.
func startServer(t *testing.T) *bridgetest.Server {
	t.Helper()
	return bridgetest.StartServer(t, "redis-server", "redis-server", func(port, dir string) []string {
		return []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
			"--appendfsync", "always", "--dir", dir}
	})
}

// config returns a Redis bridge's configuration on s in mode.
func config(s *bridgetest.Server, name, mode string, f bridge.Format) bridge.Config {
	return bridge.Config{Settings: bridge.Settings{Name: name, Kind: "redis", URL: "redis://" + s.Addr(), Format: f,
		Options: map[string]string{"mode": mode, "start": "earliest"}}}
}

// client returns a plain go-redis client of s, closed at the end of the
// test.
func client(t *testing.T, s *bridgetest.Server) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// entries returns the entries of stream, from its start.
func entries(t *testing.T, c *goredis.Client, stream string) []goredis.XMessage {
	t.Helper()
	ms, err := c.XRange(context.Background(), stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	return ms
}
