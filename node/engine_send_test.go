package node

import (
	"testing"
	"unsafe"

	"github.com/rsbd/rsbd/scope"
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
}
