package mesh

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rsbd/rsbd/mesh/frame"
)

// echo is an adaptor whose messages are frames in their wire form.
type echo struct{ name string }

func (e echo) Protocol() string                       { return e.name }
func (echo) ToFrame(msg []byte) (*frame.Frame, error) { return frame.Unmarshal(msg) }
func (echo) FromFrame(f *frame.Frame) ([]byte, error) { return frame.Marshal(f) }

func TestRegistry(t *testing.T) {
	var r Registry
	if _, err := r.Lookup("x"); !errors.Is(err, ErrUnknownAdaptor) || !strings.Contains(err.Error(), "none") {
		t.Errorf("empty registry: %v", err)
	}
	for _, name := range []string{"wire", "a2a", "mesh-message"} {
		if err := r.Register(echo{name}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Register(echo{"wire"}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	for _, bad := range []string{"", "Wire", "a b", strings.Repeat("x", MaxNameLen+1)} {
		if err := r.Register(echo{bad}); !errors.Is(err, ErrBadName) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if got := r.Names(); !slices.Equal(got, []string{"a2a", "mesh-message", "wire"}) {
		t.Errorf("names %v", got)
	}
	a, err := r.Lookup("wire")
	if err != nil || a.Protocol() != "wire" {
		t.Fatalf("lookup: %v %v", a, err)
	}
	_, err = r.Lookup("kafka")
	if !errors.Is(err, ErrUnknownAdaptor) || !strings.Contains(err.Error(), "a2a, mesh-message, wire") {
		t.Errorf("unknown: %v", err)
	}
}

func TestAdaptorConverts(t *testing.T) {
	var r Registry
	if err := r.Register(echo{"wire"}); err != nil {
		t.Fatal(err)
	}
	a, _ := r.Lookup("wire")
	in := &frame.Frame{Type: frame.StreamChunk, Seq: 3, Flags: frame.FlagDone, Attrs: []frame.Attr{{Name: "sid", Value: "s"}}}
	msg, err := a.FromFrame(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.ToFrame(msg)
	if err != nil || out.Seq != 3 || out.Flags != frame.FlagDone {
		t.Errorf("%+v %v", out, err)
	}
}

func TestConfig(t *testing.T) {
	var r Registry
	if err := r.Register(echo{"wire"}); err != nil {
		t.Fatal(err)
	}
	if err := DefaultConfig().ValidateIn(&r); err != nil {
		t.Errorf("default: %v", err)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero: %v", err)
	}
	if err := (Config{Adaptors: []string{"wire"}}).ValidateIn(&r); err != nil {
		t.Errorf("known: %v", err)
	}
	if err := (Config{Adaptors: []string{"wire", "wire"}}).ValidateIn(&r); !errors.Is(err, ErrDuplicate) {
		t.Errorf("twice: %v", err)
	}
	if err := (Config{Adaptors: []string{"nope"}}).ValidateIn(&r); !errors.Is(err, ErrUnknownAdaptor) {
		t.Errorf("unknown: %v", err)
	}
}

// runs numbers the runs of TestRegisterPanicsOnDuplicate, whose names
// stay in the process's registry.
var runs atomic.Int32

func TestRegisterPanicsOnDuplicate(t *testing.T) {
	name := "test-" + strconv.Itoa(int(runs.Add(1)))
	Register(echo{name})
	if a, err := Lookup(name); err != nil || a.Protocol() != name || !slices.Contains(Names(), name) {
		t.Fatalf("lookup: %v %v", a, err)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("no panic on a second registration")
		}
	}()
	Register(echo{name})
}
