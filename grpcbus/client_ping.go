package grpcbus

import (
	"time"

	"github.com/rsbd/rsbd/proto/grpcbuspb"
)

// tick pings, every PingInterval, each server endpoint the connection has
// streams with; a server that did not answer the previous ping counts as
// a missed heartbeat. It runs on the endpoint's goroutine.
func (c *ClientConn) tick(now time.Time) {
	if now.Sub(c.lastPing) < c.o.cfg.PingInterval {
		return
	}
	c.lastPing = now
	peers := make(map[string]bool)
	for _, s := range c.ep.snapshot() {
		if p := s.peerAddr.Load(); p != nil {
			peers[*p] = true
		}
	}
	for p := range c.awaiting {
		if !peers[p] {
			delete(c.awaiting, p)
		}
	}
	for p := range peers {
		if c.awaiting[p] {
			c.met.missedBeat()
		}
		c.awaiting[p] = true
		c.pingSeq++
		c.ep.ping(p, c.pingSeq, false)
	}
}

// onPing takes a server's answer: its streams are alive.
func (c *ClientConn) onPing(from string, p *grpcbuspb.Ping) {
	if !p.Ack {
		c.ep.ping(from, p.Data, true)
		return
	}
	delete(c.awaiting, from)
	c.ep.heard(from)
}
