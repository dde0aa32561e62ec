package bus

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// message returns the i-th test message: its index in a fixed pattern,
// of a length that varies with i.
func message(i int) []byte {
	b := make([]byte, 8+(i*37)%1500)
	binary.BigEndian.PutUint64(b, uint64(i))
	for k := 8; k < len(b); k++ {
		b[k] = byte(i + k)
	}
	return b
}

func dialT(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp4", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTCPRelayPreservesOrder streams thousands of messages both ways at
// once through the relay, written in chunks that split messages at random
// points, and checks that each side reads exactly the other's bytes.
func TestTCPRelayPreservesOrder(t *testing.T) {
	r, err := StartTCPRelay(false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, b := dialT(t, r.Addr()), dialT(t, r.Addr())
	stream := func(seed int) []byte {
		var s []byte
		for i := 0; i < 3000; i++ {
			s = append(s, message(seed+i)...)
		}
		return s
	}
	ab, ba := stream(0), stream(1_000_000)
	write := func(c net.Conn, s []byte, seed uint64) <-chan error {
		done := make(chan error, 1)
		go func() {
			rng := rand.New(rand.NewPCG(seed, 1))
			for len(s) > 0 {
				n := min(len(s), 1+rng.IntN(5000))
				if _, err := c.Write(s[:n]); err != nil {
					done <- err
					return
				}
				s = s[n:]
			}
			done <- nil
		}()
		return done
	}
	wa, wb := write(a, ab, 1), write(b, ba, 2)
	gotB := make([]byte, len(ab))
	readB := make(chan error, 1)
	go func() { _, err := io.ReadFull(b, gotB); readB <- err }()
	gotA := make([]byte, len(ba))
	if _, err := io.ReadFull(a, gotA); err != nil {
		t.Fatalf("read on a: %v", err)
	}
	for what, ch := range map[string]<-chan error{"write a": wa, "write b": wb, "read b": readB} {
		if err := <-ch; err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	if !bytes.Equal(gotB, ab) {
		t.Fatal("bytes from a arrived at b changed or reordered")
	}
	if !bytes.Equal(gotA, ba) {
		t.Fatal("bytes from b arrived at a changed or reordered")
	}
	// Only one pair is served: a third connection is closed.
	c := dialT(t, r.Addr())
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("third connection: read %v, want EOF", err)
	}
}

// TestTCPRelayRoundTrips runs the relay reference end to end: client →
// relay → echo → relay → client, each round trip answered by its own
// message, over TCP and over a Unix socket (removed on Close).
func TestTCPRelayRoundTrips(t *testing.T) {
	for _, unix := range []bool{false, true} {
		t.Run(fmt.Sprintf("unix=%v", unix), func(t *testing.T) { relayRoundTrips(t, unix) })
	}
}

func relayRoundTrips(t *testing.T, unix bool) {
	r, err := StartTCPRelay(unix)
	if err != nil {
		t.Fatal(err)
	}
	if path, ok := strings.CutPrefix(r.Addr(), "unix:"); ok != unix {
		t.Fatalf("relay address %q with unix=%v", r.Addr(), unix)
	} else if ok {
		defer func() {
			if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("socket file after Close: %v", err)
			}
		}()
	}
	defer r.Close()
	e, err := StartTCPEcho(r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c, err := DialTCP(r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Subscribe("", nil); !errors.Is(err, ErrNoSubscribe) {
		t.Fatalf("Subscribe: %v", err)
	}
	for i := 0; i < 500; i++ {
		p := message(i)
		if i%50 == 0 {
			p = append(p, make([]byte, 100_000)...) // larger than the read buffer
		}
		ok, err := c.RoundTrip(p, 10*time.Second, func(b []byte) bool { return bytes.Equal(b, p) })
		if err != nil || !ok {
			t.Fatalf("round trip %d (%d B): ok %v, err %v", i, len(p), ok, err)
		}
	}
}

// silentPeer is the second connection of a relay that echoes only when
// told to.
func silentPeer(t *testing.T) (*TCPClient, net.Conn) {
	t.Helper()
	r, err := StartTCPRelay(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	c, err := DialTCP(r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, dialT(t, r.Addr())
}

// TestTCPClientLostEchoTimesOut: a ping without echo times out; its echo
// arriving late is skipped by the next round trip, which still finds its
// own.
func TestTCPClientLostEchoTimesOut(t *testing.T) {
	c, peer := silentPeer(t)
	p1 := message(1)
	p2 := append([]byte(nil), p1...)
	p2[0] = 0xff // same length, another message
	t0 := time.Now()
	ok, err := c.RoundTrip(p1, 50*time.Millisecond, func([]byte) bool { return true })
	if ok || err != nil {
		t.Fatalf("unanswered round trip = %v, %v", ok, err)
	}
	if d := time.Since(t0); d < 50*time.Millisecond {
		t.Fatalf("timed out after %v, before its timeout", d)
	}
	// The peer echoes the first ping late, then the second.
	echo := func() error {
		frame := make([]byte, tcpPrefix+len(p1))
		if _, err := io.ReadFull(peer, frame); err != nil {
			return err
		}
		_, err := peer.Write(frame)
		return err
	}
	if err := echo(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- echo() }()
	var seen [][]byte
	ok, err = c.RoundTrip(p2, 10*time.Second, func(b []byte) bool {
		seen = append(seen, append([]byte(nil), b...))
		return bytes.Equal(b, p2)
	})
	if err != nil || !ok {
		t.Fatalf("second round trip: ok %v, err %v", ok, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || !bytes.Equal(seen[0], p1) {
		t.Fatalf("messages seen: %d, want the late echo then the answer", len(seen))
	}
}

// TestTCPClientRejectsOversizeMessage: a length prefix over the limit is an
// error, not an allocation.
func TestTCPClientRejectsOversizeMessage(t *testing.T) {
	c, peer := silentPeer(t)
	if _, err := peer.Write(binary.BigEndian.AppendUint32(nil, MaxTCPMessage+1)); err != nil {
		t.Fatal(err)
	}
	_, err := c.RoundTrip([]byte("ping"), 10*time.Second, func([]byte) bool { return false })
	if !errors.Is(err, ErrTCPFrame) {
		t.Fatalf("RoundTrip: %v, want ErrTCPFrame", err)
	}
	if err := c.Publish("", make([]byte, MaxTCPMessage+1)); !errors.Is(err, ErrTCPFrame) {
		t.Fatalf("Publish of an oversize message: %v", err)
	}
}
