package testport

import (
	"net"
	"testing"
)

func TestHold(t *testing.T) {
	addr, port, release := Hold(t)
	if _, err := net.Listen("tcp", addr); err == nil {
		t.Fatalf("port %d free for TCP while held", port)
	}
	if _, err := net.ListenPacket("udp", addr); err == nil {
		t.Fatalf("port %d free for UDP while held", port)
	}
	release()
	release()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("port %d not free after release: %v", port, err)
	}
	_ = ln.Close()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("UDP port %d not free after release: %v", port, err)
	}
	_ = pc.Close()
}
