package brokertest

import (
	"net"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

// dial checks that addr accepts a TCP connection.
func dial(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
}

func TestMosquittoRestartKeepsItsPort(t *testing.T) {
	m := StartMosquitto(t, true)
	dial(t, m.Addr())
	m.Restart(t)
	dial(t, m.Addr())
	m.Stop(t)
	if c, err := net.DialTimeout("tcp", m.Addr(), time.Second); err == nil {
		_ = c.Close()
		t.Fatal("stopped mosquitto still accepts connections")
	}
}

func TestRabbitMQSharedIsOneNode(t *testing.T) {
	a := Shared(t)
	b := Shared(t)
	if a != b {
		t.Fatal("Shared started a second node")
	}
	dial(t, a.Addr())
}
