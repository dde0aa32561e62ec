package rsbsocket

import (
	"fmt"
	"sync"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
	"github.com/rsbd/rsbd/scope"
)

// interestChecker is a Handler that records, for every frame, whether the
// server's interest already covered the frame's participant scope.
type interestChecker struct {
	s      *Server
	mu     sync.Mutex
	scopes []string // frame scopes in Handler order
	late   []string // Hellos the Handler saw before their interest took effect
}

func (h *interestChecker) OnFrame(_ ConnID, f frame.Frame) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.scopes = append(h.scopes, f.Scope.String())
	if string(f.WireSchema) == HelloWireSchema {
		want := scope.MustParse(fmt.Sprintf("/many/%d/", len(h.scopes)-1))
		if !h.s.Wanted(want) || h.s.Wanted(scope.MustParse("/other/")) {
			h.late = append(h.late, want.String())
		}
	}
}

func (h *interestChecker) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.scopes)
}

// TestManyHellosLearntTogether: a client announcing thousands of listeners
// in one burst gets them learnt in a few interest updates; the Handler
// sees every Hello, in order, only after its interest took effect, and the
// frame after them last.
func TestManyHellosLearntTogether(t *testing.T) {
	const n = 3000
	h := &interestChecker{}
	cfg := quietConfig()
	cfg.MaxParticipants = n
	s, addr := startServer(t, cfg, h)
	h.s = s
	c := socktest.Dial(t, addr)
	connOf(t, s, c)
	gen := s.InterestGeneration()
	frames := make([][]byte, 0, n+1)
	for i := range n {
		frames = append(frames, socktest.Hello(t, uuid16(i), "listener", fmt.Sprintf("/many/%d/", i)))
	}
	frames = append(frames, socktest.Notification(t, "/many/0/x/", "utf-8-string", []byte("after"), 1))
	if err := sendAll(c, frames); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, socktest.Timeout, "every frame handed on", func() bool { return h.count() == n+1 })
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.late) > 0 {
		t.Fatalf("%d Hellos reached the Handler before their interest, first %s", len(h.late), h.late[0])
	}
	if last := h.scopes[n]; last != "/many/0/x/" {
		t.Fatalf("last frame handed on: %s", last)
	}
	if got := len(s.Interest().Scopes); got != n+1 {
		t.Fatalf("interest has %d scopes, want %d", got, n+1)
	}
	if updates := s.InterestGeneration() - gen; updates > n/10 {
		t.Fatalf("%d interest updates for %d Hellos in one burst", updates, n)
	}
	t.Logf("%d Hellos, %d interest updates", n, s.InterestGeneration()-gen)
}
