package node

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// TestPublishDetached: an event no embedded subscription wants is not
// detached nor kept, and the caller's buffer, overwritten once the call
// returns, does not change what a peer receives (small events as records,
// large ones as fragments); an event a local subscription wants is
// detached before the subscription sees it, and reported kept.
func TestPublishDetached(t *testing.T) {
	nodes := startNodes(t, 2, nil)
	a, b := nodes[0], nodes[1]
	var remote, local collector
	defer b.Subscribe(scope.MustParse("/det/"), remote.handle)()
	testutil.WaitFor(t, 10*time.Second, "interest gossiped", func() bool {
		return a.interest().Wanted(groupID("/det/"))
	})
	detaches := 0
	detach := func(ev *notification.Event) {
		detaches++
		ev.Data = slices.Clone(ev.Data)
	}
	small := []byte("hello")
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB: fragments
	var want [][]byte
	for i, data := range [][]byte{small, big} {
		want = append(want, slices.Clone(data))
		kept, err := a.PublishDetached(context.Background(), testutil.Event("/det/x/", uint32(i), data), detach)
		if err != nil || kept || detaches != 0 {
			t.Fatalf("event %d without a local subscription: kept %v, err %v, %d detaches", i, kept, err, detaches)
		}
		for j := range data {
			data[j] = 'X'
		}
	}
	defer a.Subscribe(scope.MustParse("/det/"), func(ev *notification.Event) {
		if detaches != 1 {
			t.Errorf("local subscription got an event before it was detached")
		}
		local.handle(ev)
	})()
	buf := []byte("local")
	kept, err := a.PublishDetached(context.Background(), testutil.Event("/det/x/", 2, buf), detach)
	if err != nil || !kept || detaches != 1 {
		t.Fatalf("event with a local subscription: kept %v, err %v, %d detaches; want kept, 1 detach", kept, err, detaches)
	}
	copy(buf, "XXXXX")
	want = append(want, []byte("local"))
	if got := local.get(0); string(got.Data) != "local" {
		t.Fatalf("local subscription got %q, want local", got.Data)
	}
	testutil.WaitFor(t, 10*time.Second, "three events at the peer", func() bool { return remote.len() == 3 })
	for i := range 3 {
		got := remote.get(i)
		if w := want[got.ID.SequenceNumber]; !bytes.Equal(got.Data, w) {
			t.Errorf("peer's event %d: %d bytes, %.16q; want %d bytes, %.16q", got.ID.SequenceNumber, len(got.Data), got.Data, len(w), w)
		}
	}
}
