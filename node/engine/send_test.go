package engine

import (
	"testing"
	"time"
	"unsafe"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// TestWantedGroupsKeepsOwnScopes: the engine's cache of wanted groups keys
// its entries by scopes of its own, so that a scope that shares a socket
// frame's body (scope.ParseShared) does not keep the body alive.
func TestWantedGroupsKeepsOwnScopes(t *testing.T) {
	e, _ := newTestEngine(t, nil)
	body := []byte("xx/shared/scope/yy")
	sc, err := scope.ParseShared(body[2:16])
	if err != nil {
		t.Fatal(err)
	}
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
	e, _ := newTestEngine(t, nil)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	key := func(g byte) datagram.StreamKey {
		return datagram.StreamKey{Instance: e.cfg.Instance, Group: datagram.GroupID{g}, Class: datagram.UnreliableUnordered}
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
	e.cfg.MaxSenders = len(e.senders)
	c := e.sender(key(2), now.Add(time.Second)) // the limit frees the oldest idle stream
	if _, ok := e.senders[key(1)]; ok || e.senders[key(2)] != c {
		t.Fatalf("streams after the limit: %d", len(e.senders))
	}
	if d := e.sender(key(1), now.Add(2*time.Second)); d == nil || e.senders[key(1)] != d {
		t.Fatal("the evicted stream's key did not get a stream of its own")
	}
}

// TestFragmentRefsFollowStreams: a large event's buffer is held while a
// reliable stream retains its fragments, on every stream it went to, and
// goes back once the last of them lets it go; an event no peer wants
// holds nothing.
func TestFragmentRefsFollowStreams(t *testing.T) {
	e, _ := newTestEngine(t, nil)
	e.mu.Lock()
	defer e.mu.Unlock()
	capacity := e.capacity
	frags, owner, err := fragmentation.SplitEvent(nil, testutil.Event("/refs/", 1, make([]byte, 200_000)), capacity)
	if err != nil || owner == nil {
		t.Fatalf("split: %v, owner %v", err, owner)
	}
	now := time.Now()
	var sts []*senderState
	for g := range 2 {
		st := e.sender(datagram.StreamKey{Instance: e.cfg.Instance, Group: datagram.GroupID{byte(g + 1)}, Class: datagram.ReliableOrdered}, now)
		for _, r := range frags {
			e.queueRecord(st, r, owner, now)
		}
		sts = append(sts, st)
	}
	e.settleHolds(owner, 2*len(frags)) // as engine.publish does
	e.packPending(now)
	if want := 2 * len(frags); int(owner.Holds()) != want {
		t.Fatalf("refs %d, want %d (%d fragments on 2 streams)", owner.Holds(), want, len(frags))
	}
	e.handleOutput(now) // transmitted (to the group's address; no peer listens), still retained
	before := e.frags.recycled
	sts[0].s.ReleaseAll(&e.out)
	e.handleOutput(now)
	if int(owner.Holds()) != len(frags) || e.frags.recycled != before {
		t.Fatalf("one stream let go: refs %d, recycled %d", owner.Holds(), e.frags.recycled-before)
	}
	sts[1].s.ReleaseAll(&e.out)
	e.handleOutput(now)
	if owner.Holds() != 0 || e.frags.recycled != before+1 || len(e.frags.m) != 0 {
		t.Fatalf("both let go: refs %d, recycled %d, tracked %d", owner.Holds(), e.frags.recycled-before, len(e.frags.m))
	}
}

// TestReleasedDatagramsReused: a DATA datagram the sender let go (here
// unreliable, once transmitted) and its record list carry the engine's
// next datagram, emptied of what they held.
func TestReleasedDatagramsReused(t *testing.T) {
	e, _ := newTestEngine(t, nil)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	st := e.sender(datagram.StreamKey{Instance: e.cfg.Instance, Group: datagram.GroupID{9}, Class: datagram.UnreliableUnordered}, now)
	send := func(rec string) *datagram.Datagram {
		e.queueRecord(st, []byte(rec), nil, now)
		e.packPending(now)
		d := e.out.Datagrams[len(e.out.Datagrams)-1]
		if len(d.Records) != 1 || string(d.Records[0]) != rec {
			t.Fatalf("datagram holds %q, want %q", d.Records, rec)
		}
		e.handleOutput(now) // transmitted (to the group's address; no peer listens) and released
		return d
	}
	first := send("one")
	if n := len(e.free.dgs); n == 0 || e.free.dgs[n-1] != first || first.Records != nil || first.Seq != 0 {
		t.Fatalf("released datagram not kept empty: %d free, %+v", n, first)
	}
	if n := len(e.free.recs); n == 0 || e.free.recs[n-1][:1][0] != nil {
		t.Fatalf("record list not kept, or kept with its record (%d free)", n)
	}
	if second := send("two"); second != first {
		t.Fatal("the next datagram did not reuse the released one")
	}
}
