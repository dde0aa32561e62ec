package bus

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// testGroups returns two random groups, A and B, for one test.
func testGroups() (string, string) {
	x := 20 + rand.IntN(200)
	y := 1 + rand.IntN(200)
	return fmt.Sprintf("239.255.%d.%d", x, y), fmt.Sprintf("239.255.%d.%d", x, y+1)
}

// TestMcastRoundTrips pings an echo on group A and gets the pongs on
// group B, each round trip answered by its own datagram.
func TestMcastRoundTrips(t *testing.T) {
	a, b := testGroups()
	e, err := StartMcastEcho(a, b)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c, err := DialMcast(e.Addr(), b)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Subscribe("", nil); !errors.Is(err, ErrNoSubscribe) {
		t.Fatalf("Subscribe: %v", err)
	}
	lost := 0
	for i := 0; i < 500; i++ {
		p := message(i)
		ok, err := c.RoundTrip(p, time.Second, func(b []byte) bool { return bytes.Equal(b, p) })
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			lost++ // loopback UDP may drop under load, rarely
		}
	}
	if lost > 5 {
		t.Fatalf("%d of 500 round trips lost", lost)
	}
}

// TestMcastLostEchoTimesOut: the ping reaches group A, where nothing
// echoes; the pinger, listening on group B only, does not hear its own ping
// and times out.
func TestMcastLostEchoTimesOut(t *testing.T) {
	a, b := testGroups()
	ga, _ := parseGroup(a)
	listener, err := joinLoopback(ga)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	port := listener.LocalAddr().(*net.UDPAddr).Port
	c, err := DialMcast(fmt.Sprintf("%s:%d", a, port), b)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ping := []byte("ping")
	t0 := time.Now()
	ok, err := c.RoundTrip(ping, 100*time.Millisecond, func([]byte) bool { return true })
	if ok || err != nil {
		t.Fatalf("unanswered round trip = %v, %v", ok, err)
	}
	if d := time.Since(t0); d < 100*time.Millisecond {
		t.Fatalf("timed out after %v, before its timeout", d)
	}
	if err := listener.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := listener.Read(buf)
	if err != nil {
		t.Fatalf("the ping did not reach group A: %v", err)
	}
	if !bytes.Equal(buf[:n], ping) {
		t.Fatalf("group A got %q", buf[:n])
	}
}

func TestMcastRejectsUnicast(t *testing.T) {
	if _, err := StartMcastEcho("127.0.0.1", "239.255.1.1"); !errors.Is(err, ErrNotMulticast) {
		t.Fatalf("StartMcastEcho on a unicast address: %v", err)
	}
	if _, err := DialMcast("127.0.0.1:9", "239.255.1.1"); !errors.Is(err, ErrNotMulticast) {
		t.Fatalf("DialMcast to a unicast address: %v", err)
	}
}
