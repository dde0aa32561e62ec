package membership

import (
	"bytes"
	"errors"
	"fmt"
	"maps"

	"github.com/hashicorp/memberlist"

	"github.com/rsbd/rsbd/transport/datagram"
)

// ErrNoKeyring is returned by SetKeys on a Membership started without keys:
// encryption cannot be turned on in a running cluster.
var ErrNoKeyring = errors.New("membership: started without keys")

// newKeyring returns memberlist's keyring for keys (the first the
// primary), or nil without keys.
func newKeyring(keys [][]byte) (*memberlist.Keyring, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	kr, err := memberlist.NewKeyring(keys, keys[0])
	if err != nil {
		return nil, fmt.Errorf("%w: keys: %v", ErrConfig, err)
	}
	return kr, nil
}

// SetKeys replaces the gossip keyring with keys: they are added, the first
// becomes the primary (it encrypts), and the keys not listed are removed.
// Members holding either the old or the new primary keep talking, so a
// key is rotated without downtime: add the new key everywhere, make it the
// primary everywhere, remove the old one.
func (m *Membership) SetKeys(keys [][]byte) error {
	if m.keyring == nil {
		return ErrNoKeyring
	}
	if len(keys) == 0 {
		return fmt.Errorf("%w: no key", ErrConfig)
	}
	for _, k := range keys {
		if err := m.keyring.AddKey(k); err != nil {
			return fmt.Errorf("%w: key: %v", ErrConfig, err)
		}
	}
	if err := m.keyring.UseKey(keys[0]); err != nil {
		return fmt.Errorf("%w: primary key: %v", ErrConfig, err)
	}
	for _, old := range m.keyring.GetKeys() {
		if !containsKey(keys, old) {
			if err := m.keyring.RemoveKey(old); err != nil {
				return fmt.Errorf("%w: remove key: %v", ErrConfig, err)
			}
		}
	}
	return nil
}

func containsKey(keys [][]byte, k []byte) bool {
	for _, x := range keys {
		if bytes.Equal(x, k) {
			return true
		}
	}
	return false
}

// Sender names the member whose daemon runs instance inst: the data
// plane's check that a datagram comes from the cluster. It reads an index
// rebuilt when members change, without locking.
func (m *Membership) Sender(inst datagram.InstanceID) (string, bool) {
	idx := m.senders.Load()
	if idx == nil {
		return "", false
	}
	name, ok := (*idx)[inst]
	return name, ok
}

// indexSendersLocked rebuilds the instance index from m.members; m.mu is
// held.
func (m *Membership) indexSendersLocked() {
	idx := make(map[datagram.InstanceID]string, len(m.members))
	for name, mb := range m.members {
		idx[mb.Instance] = name
	}
	if old := m.senders.Load(); old != nil && maps.Equal(*old, idx) {
		return
	}
	m.senders.Store(&idx)
}
