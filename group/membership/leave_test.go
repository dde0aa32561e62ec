package membership

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/syncbuf"
	"github.com/rsbd/rsbd/internal/testutil"
)

// TestLeaveWithNobodyToTell stops two members together: b announces its
// leave and goes, and a's leave, whose broadcast then reaches no one, is
// normal (nil, logged at info), while a leave that times out with a peer
// still staying remains an error.
func TestLeaveWithNobodyToTell(t *testing.T) {
	var logs syncbuf.Buffer
	cfg := LocalConfig()
	cfg.NodeName = "a"
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a := startNodeConfig(t, cfg, 1, nil)
	b := startNode(t, "b", 2, nil, a)
	c := startNode(t, "c", 3, nil, a)
	waitEvent(t, a, EventJoin, b)
	waitEvent(t, a, EventJoin, c)

	// c stays: a leave too short for its broadcast is an error.
	if err := a.Leave(time.Nanosecond); err == nil {
		t.Fatal("a leave timing out with a peer staying reported no error")
	}
	a.leaving.Store(false)

	// b and c announce their leaves and stop without waiting for them;
	// a's memberlist still counts them alive, so its broadcast times out.
	for _, n := range []*testNode{b, c} {
		n.announceLeaving()
	}
	testutil.WaitFor(t, waitTimeout, "a sees b and c leaving", func() bool {
		m := a.Membership
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.members["b"] != nil && m.members["b"].leaving && m.members["c"] != nil && m.members["c"].leaving
	})
	for _, n := range []*testNode{b, c} {
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Leave(time.Nanosecond); err != nil {
		t.Fatalf("leave with nobody to tell: %v", err)
	}
	out := logs.String()
	if !strings.Contains(out, "level=INFO") || !strings.Contains(out, "no peer left to tell") {
		t.Fatalf("no info line about the leave:\n%s", out)
	}
	if bytes.Contains([]byte(out), []byte("level=WARN")) || strings.Contains(out, "level=ERROR") {
		t.Fatalf("the leave logged a warning or error:\n%s", out)
	}
}
