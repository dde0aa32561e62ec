package frame_test

import (
	"bytes"
	"testing"

	"github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/internal/socktest"
)

// TestFrameWrapRefused: a frame without room (ParseFrame's) or with too
// little is left untouched.
func TestFrameWrapRefused(t *testing.T) {
	body := socktest.Notification(t, "/wrap/", "bytes", []byte("x"), 1)
	f, err := frame.ParseFrame(body)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Wrap(nil, nil); ok {
		t.Fatal("a parsed frame has no room, yet Wrap succeeded")
	}
	room := make([]byte, 2+len(body)+1)
	copy(room[2:], body)
	if f, err = frame.ParseOwned(room[2:2+len(body):2+len(body)], room, 2); err != nil {
		t.Fatal(err)
	}
	before := bytes.Clone(room)
	for _, c := range []struct{ pre, suf string }{{"abc", ""}, {"", "xy"}} {
		if _, ok := f.Wrap([]byte(c.pre), []byte(c.suf)); ok {
			t.Fatalf("Wrap(%q, %q) fit a room of 2 and 1", c.pre, c.suf)
		}
	}
	if !bytes.Equal(room, before) {
		t.Fatal("a refused Wrap wrote into the room")
	}
	rec, ok := f.Wrap([]byte("ab"), []byte("c"))
	if !ok || string(rec) != "ab"+string(body)+"c" {
		t.Fatalf("Wrap of an exact fit: %q, %v", rec, ok)
	}
}

// TestParseOwned: a body of at most SharedScopeMax bytes gets a Scope in
// its own memory, a larger one a Scope of its own; a frame keeps the room
// it was read with, and a frame without room has none.
func TestParseOwned(t *testing.T) {
	small := socktest.Notification(t, "/share/small/", "bytes", []byte("x"), 1)
	large := socktest.Notification(t, "/share/large/", "bytes", make([]byte, frame.SharedScopeMax), 2)
	if len(small) > frame.SharedScopeMax || len(large) <= frame.SharedScopeMax {
		t.Fatalf("frames of %d and %d bytes around %d", len(small), len(large), frame.SharedScopeMax)
	}
	for _, c := range []struct {
		body  []byte
		share bool
	}{{small, true}, {large, false}} {
		f, err := frame.ParseOwned(c.body, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := socktest.Inside(f.Scope.String(), f.Body); got != c.share {
			t.Errorf("frame of %d bytes, scope %v: shares its body %v, want %v", len(f.Body), f.Scope, got, c.share)
		}
		if _, ok := f.Wrap(nil, nil); ok {
			t.Errorf("frame of %d bytes without room: Wrap succeeded", len(f.Body))
		}
	}
	room := append(append([]byte("<"), small...), '>')
	f, err := frame.ParseOwned(room[1:1+len(small):1+len(small)], room, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rec, ok := f.Wrap([]byte("["), []byte("]")); !ok || string(rec) != "["+string(small)+"]" {
		t.Fatalf("Wrap in the room read with: %q, %v", rec, ok)
	}
	if _, err := frame.ParseOwned([]byte("not a notification"), room, 1); err == nil {
		t.Fatal("ParseOwned accepted garbage")
	}
}
