package datagram

import (
	"bytes"
	"errors"
	"testing"
)

func testKey(id byte) Key {
	k := Key{ID: id}
	for i := range k.Secret {
		k.Secret[i] = id
	}
	return k
}

func newTestSealer(t testing.TB, label string, keys ...byte) *Sealer {
	t.Helper()
	var ks []Key
	for _, id := range keys {
		ks = append(ks, testKey(id))
	}
	s, err := NewSealer(label, ks)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var testSeal = Seal{Epoch: 7, Counter: 42}

func TestSealOpen(t *testing.T) {
	s := newTestSealer(t, "cluster-a", 1, 2)
	for name, d := range validDatagrams() {
		t.Run(name, func(t *testing.T) {
			plain := mustAppend(t, d)
			if len(plain)+SealOverhead > MaxDatagramSize {
				if _, err := s.Seal(nil, plain, testSeal); !errors.Is(err, ErrTooLarge) {
					t.Fatalf("oversize Seal: %v", err)
				}
				return
			}
			sealed, err := s.Seal([]byte("x"), plain, testSeal)
			if err != nil {
				t.Fatal(err)
			}
			if sealed[0] != 'x' {
				t.Fatal("Seal overwrote dst")
			}
			sealed = sealed[1:]
			if len(sealed) != len(plain)+SealOverhead || sealed[4] != 1 || Flags(sealed[2])&FlagSealed == 0 {
				t.Fatalf("sealed header %x, %d bytes", sealed[:8], len(sealed))
			}
			if bytes.Contains(sealed, plain[HeaderSize:]) && len(plain) > HeaderSize+8 {
				t.Fatal("body readable in the sealed datagram")
			}
			var d Datagram
			if err := Decode(sealed, &d); !errors.Is(err, ErrSealed) {
				t.Fatalf("Decode of a sealed datagram: %v", err)
			}
			id, sl, err := SealedKey(sealed)
			if err != nil || id != 1 || sl != testSeal {
				t.Fatalf("SealedKey = %d %+v %v", id, sl, err)
			}
			opened, sl, err := s.Open(sealed)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(opened, plain) || sl != testSeal {
				t.Fatalf("opened datagram differs, seal %+v", sl)
			}
		})
	}
}

func TestOpenRejects(t *testing.T) {
	a := newTestSealer(t, "cluster-a", 1, 2)
	plain := mustAppend(t, &Datagram{Kind: KindData, Stream: testStream, Seq: 5, Records: [][]byte{[]byte("secret")}})
	sealed, err := a.Seal(nil, plain, testSeal)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		c := bytes.Clone(sealed)
		c[i] ^= 1
		return c
	}
	rotated := newTestSealer(t, "cluster-a", 2, 1) // holds key 1 too: opens a's datagrams
	if _, _, err := rotated.Open(bytes.Clone(sealed)); err != nil {
		t.Fatalf("rotation: the new primary's Sealer cannot open the old key: %v", err)
	}
	n := len(sealed)
	cases := []struct {
		name string
		s    *Sealer
		b    []byte
		want error
	}{
		{"other label", newTestSealer(t, "cluster-b", 1), sealed, ErrAuth},
		{"header changed", a, flip(40), ErrAuth},
		{"body changed", a, flip(HeaderSize), ErrAuth},
		{"tag changed", a, flip(n - SealOverhead), ErrAuth},
		{"epoch changed", a, flip(n - nonceSize - sealCountersSize), ErrAuth},
		{"counter changed", a, flip(n - nonceSize - 1), ErrAuth},
		{"nonce changed", a, flip(n - 1), ErrAuth},
		{"unknown key", newTestSealer(t, "cluster-a", 2), sealed, ErrUnknownKey},
		{"short", a, sealed[:HeaderSize+SealOverhead-1], ErrShort},
		{"not sealed", a, plain, ErrUnsealed},
		{"too large", a, make([]byte, MaxDatagramSize+1), ErrTooLarge},
		{"version", a, flip(0), ErrVersion},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := c.s.Open(bytes.Clone(c.b))
			if !errors.Is(err, c.want) || out != nil {
				t.Fatalf("Open error %v, want %v", err, c.want)
			}
		})
	}
}

func TestSealRejects(t *testing.T) {
	s := newTestSealer(t, "l", 1)
	plain := mustAppend(t, &Datagram{Kind: KindData, Stream: testStream, Seq: 5, Records: [][]byte{[]byte("x")}})
	sealed, _ := s.Seal(nil, plain, testSeal)
	if _, err := s.Seal(nil, sealed, testSeal); !errors.Is(err, ErrSealed) {
		t.Errorf("sealing twice: %v", err)
	}
	if _, err := s.Seal(nil, plain[:HeaderSize-1], testSeal); !errors.Is(err, ErrShort) {
		t.Errorf("short: %v", err)
	}
}

func TestNewSealerRejects(t *testing.T) {
	for name, c := range map[string]struct {
		label string
		keys  []Key
	}{
		"no key":     {"l", nil},
		"key id 0":   {"l", []Key{testKey(1), {ID: 0}}},
		"repeated":   {"l", []Key{testKey(1), testKey(1)}},
		"long label": {string(make([]byte, 256)), []Key{testKey(1)}},
	} {
		if _, err := NewSealer(c.label, c.keys); !errors.Is(err, ErrKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
	s := newTestSealer(t, "l", 3, 1)
	if s.Primary() != 3 || !bytes.Equal(s.KeyIDs(), []byte{3, 1}) {
		t.Errorf("primary %d, ids %v", s.Primary(), s.KeyIDs())
	}
}

// FuzzOpen checks that Open never panics on hostile input and that whatever
// opens is what some Seal produced: here, only the fuzzer's own seeds.
func FuzzOpen(f *testing.F) {
	s := newTestSealer(f, "fuzz", 1)
	for _, d := range validDatagrams() {
		plain := mustAppend(f, d)
		if len(plain) > 4096 {
			continue
		}
		sealed, err := s.Seal(nil, plain, testSeal)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(sealed)
	}
	f.Add(make([]byte, HeaderSize+SealOverhead))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, _, err := s.Open(b)
		if err != nil {
			return
		}
		var d Datagram
		if err := Decode(out, &d); err != nil {
			t.Fatalf("authentic datagram does not decode: %v", err)
		}
	})
}

func BenchmarkSeal(b *testing.B) {
	s := newTestSealer(b, "bench", 1)
	for _, n := range benchSizes {
		plain := mustAppend(b, &Datagram{Kind: KindData, Stream: testStream, Seq: 1, Records: [][]byte{make([]byte, n)}})
		sealed, _ := s.Seal(nil, plain, testSeal)
		buf := make([]byte, 0, len(sealed))
		b.Run("seal/"+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = s.Seal(buf[:0], plain, testSeal)
			}
		})
		b.Run("open/"+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				buf = append(buf[:0], sealed...)
				if _, _, err := s.Open(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func sizeName(n int) string {
	if n >= 1024 {
		return "record=1KiB"
	}
	return "record=64B"
}
