package membership

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testport"
	"github.com/rsbd/rsbd/internal/testutil"
)

func TestJoinBackoff(t *testing.T) {
	b := joinBackoff{min: time.Second, max: 10 * time.Second}
	for i, want := range []time.Duration{1, 2, 4, 8, 10, 10} {
		if got := b.next(true, 0); got != want*time.Second {
			t.Fatalf("failure %d: wait %v, want %v", i+1, got, want*time.Second)
		}
	}
	if got := b.next(false, 0.9); got != time.Second {
		t.Fatalf("with a peer: wait %v, want the check period 1s", got)
	}
	if got := b.next(true, 0); got != time.Second {
		t.Fatalf("alone again: wait %v, want the backoff to start over at 1s", got)
	}
	// Jitter adds up to a quarter of the delay.
	if got := b.next(true, 0.999); got < 2*time.Second || got >= 2500*time.Millisecond {
		t.Fatalf("jittered wait %v, want within [2s, 2.5s)", got)
	}
}

// A node whose seed comes up after it keeps trying and joins it; once the
// seed is gone and back at the same address, the node, alone again, joins
// it again. Neither seed start has a Join list of its own: only the join
// loop can bring the two together.
func TestJoinSeedThatStartsLater(t *testing.T) {
	// The listener of the held port never accepts: a join to it waits for
	// memberlist's TCP timeout, as with a seed that accepts and never answers.
	seedAddr, port, release := testport.Hold(t)

	cfg := LocalConfig()
	cfg.NodeName = "early"
	cfg.Logger = discard
	cfg.Join = []string{seedAddr}
	began := time.Now()
	a := startNodeConfig(t, cfg, 1, nil)
	if d := time.Since(began); d > time.Second {
		t.Fatalf("New took %v with an unanswering seed; the join must not hold it up", d)
	}
	testutil.WaitFor(t, waitTimeout, "two failed join attempts", func() bool { return a.Stats().JoinsFailed >= 2 })

	seedCfg := LocalConfig()
	seedCfg.BindPort = port
	seedCfg.Logger = discard
	seedCfg.NodeName = "seed"
	release()
	seed, err := New(seedCfg, LocalState{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = seed.Close() })
	testutil.WaitFor(t, waitTimeout, "the early node to join the late seed", func() bool {
		return len(a.Members()) == 1 && len(seed.Members()) == 1
	})

	if err := seed.Leave(time.Second); err != nil {
		t.Fatal(err)
	}
	if err := seed.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, waitTimeout, "the early node to be alone", func() bool { return len(a.Members()) == 0 })
	seedCfg.NodeName = "seed-again"
	again, err := New(seedCfg, LocalState{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	testutil.WaitFor(t, waitTimeout, "the early node to join the seed again", func() bool {
		return len(a.Members()) == 1 && len(again.Members()) == 1
	})
	// Whether an attempt counts as answered is memberlist's word: under
	// load an exchange may time out here although the seed took this
	// node's state and brings it in. Both phases needed attempts.
	if st := a.Stats(); st.JoinsOK+st.JoinsFailed < 4 {
		t.Fatalf("%d answered and %d unanswered attempts, want at least 4 in all", st.JoinsOK, st.JoinsFailed)
	}
}

func TestStartJoiningTwice(t *testing.T) {
	cfg := LocalConfig()
	cfg.Logger = discard
	cfg.Join = []string{"127.0.0.1:1"}
	m, err := New(cfg, LocalState{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.StartJoining([]string{"127.0.0.1:2"}); !errors.Is(err, ErrJoining) {
		t.Fatalf("second StartJoining: %v, want ErrJoining", err)
	}
	began := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("Close took %v while joining a refusing seed", d)
	}
	if err := m.StartJoining([]string{"127.0.0.1:2"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("StartJoining after Close: %v, want ErrClosed", err)
	}
}

func TestJoinRetryConfig(t *testing.T) {
	c := Config{JoinRetry: time.Minute}.withDefaults()
	if c.JoinRetryMax != time.Minute {
		t.Fatalf("JoinRetryMax %v, want it raised to JoinRetry", c.JoinRetryMax)
	}
	if err := (Config{JoinRetry: time.Second, JoinRetryMax: time.Millisecond}).Validate(); !errors.Is(err, ErrConfig) {
		t.Fatalf("max below retry: %v", err)
	}
	if err := (Config{JoinRetry: -1}).Validate(); !errors.Is(err, ErrConfig) {
		t.Fatalf("negative retry: %v", err)
	}
}

// Close does not wait out memberlist's TCP timeout (10 s in the LAN
// profile) for a join to a seed that accepts and never answers.
func TestCloseDuringJoin(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := Config{BindAddr: "127.0.0.1", BindPort: AnyPort, Logger: discard, Join: []string{ln.Addr().String()}}
	m, err := New(cfg, LocalState{})
	if err != nil {
		t.Fatal(err)
	}
	// The join loop's connection: held open, never answered.
	held, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	began := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Fatalf("Close took %v during a join to an unanswering seed", d)
	}
	if st := m.Stats(); st.JoinsOK != 0 {
		t.Fatalf("joins ok %d with a seed that never answered", st.JoinsOK)
	}
}

// A node that announced its departure does not join again: the join loop
// ends at its next attempt.
func TestJoinLoopEndsWithLeave(t *testing.T) {
	cfg := LocalConfig()
	cfg.Logger = discard
	cfg.Join = []string{"127.0.0.1:1"}
	cfg.JoinRetry, cfg.JoinRetryMax = time.Millisecond, time.Millisecond
	m, err := New(cfg, LocalState{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	testutil.WaitFor(t, waitTimeout, "a failed join attempt", func() bool { return m.Stats().JoinsFailed >= 1 })
	if err := m.Leave(time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.joinEnded:
	case <-time.After(10 * time.Second):
		t.Fatal("the join loop still runs after Leave")
	}
}
