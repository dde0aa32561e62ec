package mqtt

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/internal/testutil"
)

// timeout bounds every wait of these tests: generous, the host is loaded.
const timeout = 20 * time.Second

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// openBroker returns the Broker of an mqtt section with options.
func openBroker(t *testing.T, url string, f bridge.Format, opts map[string]string) bridge.Broker {
	t.Helper()
	b, err := Open(bridge.Settings{Name: t.Name(), Kind: Kind, URL: url, Format: f, Options: opts, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// subscriber5 is a plain MQTT 5 client of the test, subscribed to topic.
func subscriber5(t testing.TB, addr, id, topic string, qos byte, clean bool) <-chan *paho.Publish {
	t.Helper()
	ch := make(chan *paho.Publish, 1024)
	connect5(t, addr, autopaho.ClientConfig{
		CleanStartOnInitialConnection: clean, SessionExpiryInterval: 600,
		OnConnectionUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
			go func() {
				_, _ = cm.Subscribe(context.Background(), &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: topic, QoS: qos}}})
			}()
		},
		ClientConfig: paho.ClientConfig{ClientID: id, OnPublishReceived: []func(paho.PublishReceived) (bool, error){
			func(pr paho.PublishReceived) (bool, error) { ch <- pr.Packet; return true, nil },
		}},
	})
	return ch
}

// publisher5 is a plain MQTT 5 client of the test.
func publisher5(t testing.TB, addr string) *autopaho.ConnectionManager {
	t.Helper()
	return connect5(t, addr, autopaho.ClientConfig{
		CleanStartOnInitialConnection: true,
		ClientConfig:                  paho.ClientConfig{ClientID: "test-pub-" + strconv.FormatInt(time.Now().UnixNano(), 36)},
	})
}

// connect5 connects a plain MQTT 5 client of cfg to the broker at addr,
// reconnecting quickly after a broker restart, and disconnects it at the
// end of the test.
func connect5(t testing.TB, addr string, cfg autopaho.ClientConfig) *autopaho.ConnectionManager {
	t.Helper()
	u, _ := url.Parse("mqtt://" + addr)
	cfg.ServerUrls, cfg.KeepAlive = []*url.URL{u}, 20
	cfg.ReconnectBackoff = func(int) time.Duration { return 100 * time.Millisecond }
	cm, err := autopaho.NewConnection(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := cm.AwaitConnection(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = cm.Disconnect(ctx)
	})
	return cm
}

// subscribed waits until the receiver's subscription exists: MQTT has no
// way to ask, so the test publishes probes until the receiver reads one.
func subscribed(t *testing.T, pub func(payload string), ch <-chan bridge.Message) {
	t.Helper()
	testutil.WaitFor(t, timeout, "the receiver's subscription", func() bool {
		pub("probe")
		select {
		case m := <-ch:
			return m.Event != nil && string(m.Event.Data) == "probe"
		case <-time.After(200 * time.Millisecond):
			return false
		}
	})
	// Drain probes still on their way.
	for {
		select {
		case <-ch:
		case <-time.After(300 * time.Millisecond):
			return
		}
	}
}

// mosquittoPub runs Debian's mosquitto_pub.
func mosquittoPub(t *testing.T, addr string, args ...string) {
	t.Helper()
	bin := testutil.Program(t, "mosquitto-clients", "mosquitto_pub")
	host, port, _ := cutHostPort(addr)
	out, err := exec.Command(bin, append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("mosquitto_pub: %v: %s", err, out)
	}
}

// cutHostPort splits host:port.
func cutHostPort(addr string) (string, string, bool) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[:i], addr[i+1:], true
		}
	}
	return addr, "", false
}

// timeAfter is the channel a test's wait for the next message gives up
// on.
func timeAfter() <-chan time.Time { return time.After(timeout) }
