package notification

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/scope"
)

// decodeAll decodes b with DecodeNotification and with a Decoder (plain
// and aliasing) whose scope cache already holds other scopes and, on the
// second round, b's own scope. It fails unless all agree.
func decodeAll(t testing.TB, b []byte) (*Event, error) {
	t.Helper()
	want, werr := DecodeNotification(b)
	var d Decoder
	for _, warm := range []*Event{benchEvent(3), presenceEvent(func(e *Event) { e.Scope = scope.MustParse("/a") })} {
		if _, err := d.Decode(mustMarshal(t, warm)); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 2 {
		for _, alias := range []bool{false, true} {
			in := bytes.Clone(b)
			var got *Event
			var err error
			if alias {
				got, err = d.DecodeAlias(in)
			} else {
				got, err = d.Decode(in)
			}
			if (err == nil) != (werr == nil) || (werr != nil && err.Error() != werr.Error()) {
				t.Fatalf("round %d alias %v: error %v, DecodeNotification %v", round, alias, err, werr)
			}
			if err != nil {
				continue
			}
			if !got.Equal(want) || got.Present != want.Present {
				t.Fatalf("round %d alias %v: %+v\nwant %+v", round, alias, got, want)
			}
			checkAliasing(t, got, in, alias)
		}
		// Into an event holding another one's fields: overwritten whole,
		// or left alone on error.
		dst := benchEvent(5)
		stale := *dst
		in := bytes.Clone(b)
		err := d.DecodeAliasInto(dst, in)
		if (err == nil) != (werr == nil) {
			t.Fatalf("round %d into: error %v, DecodeNotification %v", round, err, werr)
		}
		if err != nil {
			if !dst.Equal(&stale) {
				t.Fatalf("round %d into: a failed decode changed the event", round)
			}
			continue
		}
		if !dst.Equal(want) || dst.Present != want.Present {
			t.Fatalf("round %d into: %+v\nwant %+v", round, dst, want)
		}
		checkAliasing(t, dst, in, true)
	}
	return want, werr
}

// checkAliasing checks that e.Data lies inside in exactly when alias is set,
// and that appending to an aliased Data never writes into in.
func checkAliasing(t testing.TB, e *Event, in []byte, alias bool) {
	t.Helper()
	if len(e.Data) == 0 {
		return
	}
	inside := overlaps(e.Data, in)
	if inside != alias {
		t.Fatalf("Data inside the input: %v, want %v", inside, alias)
	}
	if !alias {
		return
	}
	snapshot := bytes.Clone(in)
	_ = append(e.Data, 0xee)
	if !bytes.Equal(in, snapshot) {
		t.Fatal("appending to an aliased Data wrote into the input")
	}
}

func overlaps(a, b []byte) bool {
	for i := range b {
		if &b[i] == &a[0] {
			return true
		}
	}
	return false
}

func mustMarshal(t testing.TB, e *Event) []byte {
	t.Helper()
	b, err := Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecoderAgrees(t *testing.T) {
	for _, tt := range decodeCases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeAll(t, unhex(t, tt.hex))
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
		})
	}
	for _, size := range []int{0, 1, 1024, 70000} {
		decodeAll(t, mustMarshal(t, benchEvent(size)))
	}
}

func TestDecoderScopeCache(t *testing.T) {
	var d Decoder
	scopes := []string{"/a/", "/b", "/c/d/", "/a/", "/e/", "/f/", "/b", "/b/"}
	for _, s := range scopes {
		ev := benchEvent(8)
		ev.Scope = scope.MustParse(s)
		// Write the scope as given (perhaps without its trailing slash).
		n := ToNotification(ev)
		n.Scope = []byte(s)
		b, err := proto.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.Scope != ev.Scope {
			t.Fatalf("scope %q decoded as %q", s, got.Scope)
		}
	}
	long := "/" + string(bytes.Repeat([]byte("x"), 300)) + "/"
	ev := benchEvent(8)
	ev.Scope = scope.MustParse(long)
	for range 2 {
		if got, err := d.Decode(mustMarshal(t, ev)); err != nil || got.Scope != ev.Scope {
			t.Fatalf("long scope: %v, %v", got, err)
		}
	}
}

func TestDecodeAliasRetained(t *testing.T) {
	var d Decoder
	in := mustMarshal(t, benchEvent(100))
	e, err := d.DecodeAlias(in)
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(e.Data)
	for i := range in {
		in[i] ^= 0xff
	}
	if !bytes.Equal(c.Data, want) {
		t.Fatal("Decode's Data changed with its input")
	}
	if bytes.Equal(e.Data, want) {
		t.Fatal("DecodeAlias's Data does not alias its input")
	}
}

func BenchmarkDecoder(b *testing.B) {
	in := mustMarshal(b, benchEvent(1024))
	var d Decoder
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	b.Run("copy", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.Decode(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("alias", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.DecodeAlias(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("alias-into", func(b *testing.B) {
		var ev Event
		for b.Loop() {
			if err := d.DecodeAliasInto(&ev, in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDecoderHint: a hinted scope is taken without parsing when the field
// reads exactly its normalized form; any other field decodes as without
// the hint.
func TestDecoderHint(t *testing.T) {
	var d Decoder
	hinted := scope.MustParse("/h/x/")
	// A hinted scope is taken as it is: decoding allocates nothing for it,
	// while a decoder without the hint parses the scope.
	in := mustMarshal(t, &Event{Scope: hinted, ID: EventID{SenderID: [16]byte{1}, SequenceNumber: 1}})
	var ev Event
	decodeWith := func(hint bool) float64 {
		return testing.AllocsPerRun(50, func() {
			var fresh Decoder
			if hint {
				fresh.Hint(hinted)
			}
			if err := fresh.DecodeAliasInto(&ev, in); err != nil || ev.Scope != hinted {
				t.Fatalf("decoded scope %v (%v)", ev.Scope, err)
			}
		})
	}
	if with, without := decodeWith(true), decodeWith(false); with >= without {
		t.Fatalf("%v allocations with the hint, %v without", with, without)
	}
	d.Hint(hinted)
	for _, wire := range []string{"/h/x/", "/h/x", "/other/"} {
		ev := benchEvent(8)
		ev.Scope = scope.MustParse(wire)
		no := ToNotification(ev)
		no.Scope = []byte(wire)
		b, err := proto.Marshal(no)
		if err != nil {
			t.Fatal(err)
		}
		want, werr := DecodeNotification(b)
		got, gerr := d.DecodeAlias(b)
		if (werr == nil) != (gerr == nil) || got.Scope != want.Scope || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("wire scope %q: hinted decode %v (%v), plain %v (%v)", wire, got.Scope, gerr, want.Scope, werr)
		}
	}
}

// TestDecodeInternsCommonStrings: the method and a user info whose key
// and value are among the interned strings cost no allocation of their
// own, while an unknown user info does.
func TestDecodeInternsCommonStrings(t *testing.T) {
	var d Decoder
	hinted := scope.MustParse("/h/x/")
	d.Hint(hinted)
	decode := func(key, value string) float64 {
		ev := &Event{Scope: hinted, ID: EventID{SenderID: [16]byte{1}, SequenceNumber: 1}, Method: "FRAME", WireSchema: SchemaBytes}
		ev.MetaData.UserInfos = []UserInfo{{Key: key, Value: value}}
		in := mustMarshal(t, ev)
		var out Event
		return testing.AllocsPerRun(50, func() {
			out = Event{}
			if err := d.DecodeAliasInto(&out, in); err != nil || out.Method != "FRAME" || len(out.MetaData.UserInfos) != 1 {
				t.Fatalf("decoded %+v (%v)", out, err)
			}
		})
	}
	if known, unknown := decode("grpc-wire-format", "proto"), decode("grpc-wire-fmt", "protobuf"); known+2 != unknown {
		t.Errorf("%v allocations with interned user info strings, %v with others; want 2 fewer", known, unknown)
	}
}
