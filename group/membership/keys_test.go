package membership

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/transport/datagram"
)

func gossipKey(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func keyedConfig(name, label string, keys ...[]byte) Config {
	cfg := LocalConfig()
	cfg.NodeName, cfg.Label, cfg.Keys = name, label, keys
	return cfg
}

// TestKeyedGossip: members sharing a key and label form a cluster and name
// each other's instances; a node without the key, or with another label,
// cannot join it.
func TestKeyedGossip(t *testing.T) {
	a := startNodeConfig(t, keyedConfig("a", "lab", gossipKey(1)), 1, nil)
	b := startNodeConfig(t, keyedConfig("b", "lab", gossipKey(1)), 2, nil, a)
	// b's join returns once a answered; a takes b in right after.
	testutil.WaitForMsg(t, waitTimeout, func() string {
		name, ok := a.Sender(b.Instance())
		return fmt.Sprintf("a naming b's instance: a.Sender(b) = %q %v", name, ok)
	}, func() bool {
		name, ok := a.Sender(b.Instance())
		return ok && name == "b"
	})
	if _, ok := a.Sender(datagram.InstanceID{9}); ok {
		t.Fatal("an unknown instance is named")
	}
	for _, cfg := range []Config{keyedConfig("plain", "lab"), keyedConfig("wrongkey", "lab", gossipKey(2)),
		keyedConfig("otherlabel", "other", gossipKey(1))} {
		cfg.Logger = discard
		c, err := New(cfg, LocalState{Instance: datagram.InstanceID{3}})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := c.Join([]string{a.GossipAddr().String()}); err == nil || n != 0 {
			t.Errorf("%s joined: %d, %v", cfg.NodeName, n, err)
		}
		_ = c.Close()
		if _, ok := a.Sender(datagram.InstanceID{3}); ok || len(a.Members()) != 1 {
			t.Errorf("%s became a member of a: %v", cfg.NodeName, a.Members())
		}
	}
}

// TestKeyRotation rotates the gossip key on a running pair in three steps;
// they stay members of each other, and a newcomer with only the new key
// joins at the end.
func TestKeyRotation(t *testing.T) {
	a := startNodeConfig(t, keyedConfig("a", "", gossipKey(1)), 1, nil)
	b := startNodeConfig(t, keyedConfig("b", "", gossipKey(1)), 2, nil, a)
	steps := [][][]byte{
		{gossipKey(1), gossipKey(2)}, // add the new key everywhere
		{gossipKey(2), gossipKey(1)}, // make it the primary
		{gossipKey(2)},               // remove the old one
	}
	for i, keys := range steps {
		for _, n := range []*testNode{a, b} {
			if err := n.SetKeys(keys); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		// A round of push/pull over the new keyring keeps both alive.
		if _, err := a.Join([]string{b.GossipAddr().String()}); err != nil {
			t.Fatalf("step %d: a cannot reach b: %v", i, err)
		}
	}
	c := startNodeConfig(t, keyedConfig("c", "", gossipKey(2)), 3, nil, a)
	testutil.WaitFor(t, waitTimeout, "b and c to know all members", func() bool {
		return len(b.Members()) == 2 && len(c.Members()) == 2
	})
	if err := a.SetKeys(nil); !errors.Is(err, ErrConfig) {
		t.Errorf("SetKeys(nil): %v", err)
	}
	plain := startNode(t, "plain", 4, nil)
	if err := plain.SetKeys([][]byte{gossipKey(1)}); !errors.Is(err, ErrNoKeyring) {
		t.Errorf("SetKeys without keyring: %v", err)
	}
}
