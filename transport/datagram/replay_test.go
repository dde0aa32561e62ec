package datagram

import (
	"errors"
	"testing"
)

func TestReplay(t *testing.T) {
	r := NewReplay(0)
	a := InstanceID{1}
	accept := func(sender string, inst InstanceID, epoch, counter uint64, want error) {
		t.Helper()
		sl := Seal{Epoch: epoch, Counter: counter}
		if err := r.Check(sender, inst, sl); !errors.Is(err, want) {
			t.Fatalf("Check(%s %d/%d) = %v, want %v", sender, epoch, counter, err, want)
		}
		if err := r.Accept(sender, inst, sl); !errors.Is(err, want) {
			t.Fatalf("Accept(%s %d/%d) = %v, want %v", sender, epoch, counter, err, want)
		}
	}
	accept("a", a, 10, 5, nil)
	accept("a", a, 10, 5, ErrReplay)
	accept("a", a, 10, 7, nil)
	accept("a", a, 10, 6, nil) // reordered, inside the window
	accept("a", a, 10, 6, ErrReplay)
	accept("a", a, 10, 4, nil) // older than the first seen, inside the window
	accept("a", a, 10, 7+ReplayWindow, nil)
	accept("a", a, 10, 7, ErrReplay) // behind the window
	accept("a", a, 10, 8, nil)       // the window's last counter, never seen
	accept("a", a, 10, 3, ErrReplay) // behind the window, never seen
	accept("a", a, 10, 8+ReplayWindow, nil)
	accept("a", InstanceID{2}, 10, 9+ReplayWindow, ErrStaleEpoch) // another instance, same epoch
	// The sender restarts: a new instance and a higher epoch; its old run is refused.
	b := InstanceID{3}
	accept("a", b, 11, 1, nil)
	accept("a", a, 10, 9+ReplayWindow, ErrStaleEpoch)
	accept("a", b, 11, 1, ErrReplay)
	accept("a", b, 11, 2, nil)
	// Other senders are independent.
	accept("b", a, 1, 1, nil)
	if r.Len() != 2 {
		t.Fatalf("Len %d", r.Len())
	}
	r.Forget("b", b) // not b's current run
	if r.Len() != 2 {
		t.Fatalf("Len after Forget of another run %d", r.Len())
	}
	r.Forget("b", a)
	if r.Len() != 1 {
		t.Fatalf("Len after Forget %d", r.Len())
	}
}

func TestReplayBounded(t *testing.T) {
	r := NewReplay(3)
	for i := range 10 {
		if err := r.Accept(string(rune('a'+i)), InstanceID{byte(i)}, Seal{1, 1}); err != nil {
			t.Fatal(err)
		}
		if r.Len() > 3 {
			t.Fatalf("%d senders tracked", r.Len())
		}
	}
}

// TestReplayWindowWraps checks the window over many counters: every counter
// is accepted once, none twice, with reordering by up to a window.
func TestReplayWindowWraps(t *testing.T) {
	r := NewReplay(0)
	inst := InstanceID{1}
	const n = 5 * ReplayWindow
	for base := uint64(1); base < n; base += 100 {
		for c := base + 99; c >= base; c-- { // each run of 100 reversed
			if err := r.Accept("s", inst, Seal{1, c}); err != nil {
				t.Fatalf("counter %d: %v", c, err)
			}
			if err := r.Accept("s", inst, Seal{1, c}); !errors.Is(err, ErrReplay) {
				t.Fatalf("counter %d twice: %v", c, err)
			}
		}
	}
}

// FuzzReplay drives a Replay with operations read from the input and
// checks it against a model: no (sender, epoch, counter) is accepted
// twice and nothing of an older run of a sender is accepted after a newer
// one. Its bound is the number of senders the input names, so none is
// evicted (TestReplayBounded checks eviction).
func FuzzReplay(f *testing.F) {
	f.Add([]byte{0, 1, 1, 0, 1, 1, 0, 1, 2, 0, 2, 1, 0, 1, 3})
	f.Add([]byte{1, 5, 200, 2, 5, 1, 1, 5, 100, 1, 6, 1, 1, 5, 101})
	f.Fuzz(func(t *testing.T, ops []byte) {
		r := NewReplay(3)
		type key struct {
			sender byte
			epoch  uint64
			ctr    uint64
		}
		accepted := map[key]bool{}
		newest := map[byte]uint64{}
		for len(ops) >= 3 {
			sender, epoch, ctr := ops[0]%3, uint64(ops[1]%4), uint64(ops[2])*37
			ops = ops[3:]
			name := string(rune('a' + sender))
			if err := r.Accept(name, InstanceID{sender, byte(epoch)}, Seal{epoch, ctr}); err != nil {
				continue
			}
			k := key{sender, epoch, ctr}
			if accepted[k] {
				t.Fatalf("%+v accepted twice", k)
			}
			accepted[k] = true
			if e, ok := newest[sender]; ok && epoch < e {
				t.Fatalf("sender %d: epoch %d accepted after %d", sender, epoch, e)
			}
			newest[sender] = max(newest[sender], epoch)
			if r.Len() > 3 {
				t.Fatalf("%d senders tracked, bound 3", r.Len())
			}
		}
	})
}
