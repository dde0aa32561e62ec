package node

import (
	"testing"
	"time"
	"unsafe"

	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// TestWantedGroupsKeepsOwnScopes: the engine's cache of wanted groups keys
// its entries by scopes of its own, so that a scope that shares a socket
// frame's body (scope.ParseShared) does not keep the body alive.
func TestWantedGroupsKeepsOwnScopes(t *testing.T) {
	n := startNodes(t, 1, nil)[0]
	body := []byte("xx/shared/scope/yy")
	sc, err := scope.ParseShared(body[2:16])
	if err != nil {
		t.Fatal(err)
	}
	e := n.eng
	e.mu.Lock()
	defer e.mu.Unlock()
	e.wantedGroups(sc)
	start := uintptr(unsafe.Pointer(&body[0]))
	found := false
	for k := range e.want.m {
		p := uintptr(unsafe.Pointer(unsafe.StringData(k.String())))
		if p >= start && p < start+uintptr(len(body)) {
			t.Fatalf("cached scope %v shares the frame body", k)
		}
		found = found || k == sc
	}
	if !found {
		t.Fatalf("scope %v not cached", sc)
	}
	if w := e.want.last; w == nil || w.scope != sc || unsafe.StringData(w.scope.String()) == unsafe.StringData(sc.String()) {
		t.Fatalf("last entry %+v for %v", w, sc)
	}
}

// TestSenderLookupForgetsFreedStreams: the sender stream the engine found
// last is used again for its key, never once the stream was freed (idle
// expiry or the stream limit).
func TestSenderLookupForgetsFreedStreams(t *testing.T) {
	n := startNodes(t, 1, nil)[0]
	e := n.eng
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	key := func(g byte) datagram.StreamKey {
		return datagram.StreamKey{Instance: n.instance, Group: datagram.GroupID{g}, Class: datagram.UnreliableUnordered}
	}
	a := e.sender(key(1), now)
	if a == nil || e.sender(key(1), now) != a {
		t.Fatal("the same key gave another stream")
	}
	e.expireSenders(now.Add(DefaultSenderIdle + time.Second))
	if _, ok := e.senders[key(1)]; ok {
		t.Fatal("idle stream not freed")
	}
	if b := e.sender(key(1), now); b == a || e.senders[key(1)] != b {
		t.Fatal("a freed stream was used again")
	}
	e.n.cfg.MaxSenders = len(e.senders)
	c := e.sender(key(2), now.Add(time.Second)) // the limit frees the oldest idle stream
	if _, ok := e.senders[key(1)]; ok || e.senders[key(2)] != c {
		t.Fatalf("streams after the limit: %d", len(e.senders))
	}
	if d := e.sender(key(1), now.Add(2*time.Second)); d == nil || e.senders[key(1)] != d {
		t.Fatal("the evicted stream's key did not get a stream of its own")
	}
}
