package nats_test

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/bridge/bridgetest"
	_ "github.com/rsbd/rsbd/bridge/nats"
)

// startServer starts Debian's nats-server with JetStream on a free port,
// storing in its own directory, killed at the end of the test.
func startServer(t *testing.T) *bridgetest.Server {
	t.Helper()
	return bridgetest.StartServer(t, "nats-server", "nats-server", func(port, dir string) []string {
		return []string{"-a", "127.0.0.1", "-p", port, "-js", "-sd", dir}
	})
}

// url returns the server's NATS URL.
func url(s *bridgetest.Server) string { return "nats://" + s.Addr() }

// config returns a NATS bridge's configuration on s.
func config(s *bridgetest.Server, name string, f bridge.Format, jetstream bool) bridge.Config {
	js := "false"
	if jetstream {
		js = "true"
	}
	return bridge.Config{Settings: bridge.Settings{Name: name, Kind: "nats", URL: url(s), Format: f,
		Options: map[string]string{"jetstream": js}}}
}

// conn returns a plain nats.go connection to s, closed at the end of the
// test.
func conn(t *testing.T, s *bridgetest.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url(s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// next returns the next message of sub within the tests' timeout.
func next(t *testing.T, sub *nats.Subscription) *nats.Msg {
	t.Helper()
	m, err := sub.NextMsg(bridgetest.Timeout)
	if err != nil {
		t.Fatalf("no message: %v", err)
	}
	return m
}
