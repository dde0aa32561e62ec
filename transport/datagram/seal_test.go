package datagram

import (
	"bytes"
	"errors"
	"testing"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func newTestSealer(t testing.TB, label string, primary uint8) *Sealer {
	t.Helper()
	s, err := NewSealer(label, primary, map[uint8][]byte{1: testKey(1), 2: testKey(2)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealOpen(t *testing.T) {
	s := newTestSealer(t, "cluster-a", 1)
	for name, d := range validDatagrams() {
		t.Run(name, func(t *testing.T) {
			plain := mustAppend(t, d)
			if len(plain)+SealOverhead > MaxDatagramSize {
				if _, err := s.Seal(nil, plain); !errors.Is(err, ErrTooLarge) {
					t.Fatalf("oversize Seal: %v", err)
				}
				return
			}
			sealed, err := s.Seal(nil, plain)
			if err != nil {
				t.Fatal(err)
			}
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
			opened, err := s.Open([]byte("x"), sealed)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(opened[1:], plain) || opened[0] != 'x' {
				t.Fatal("opened datagram differs")
			}
		})
	}
}

func TestOpenRejects(t *testing.T) {
	a := newTestSealer(t, "cluster-a", 1)
	plain := mustAppend(t, &Datagram{Kind: KindData, Stream: testStream, Seq: 5, Records: [][]byte{[]byte("secret")}})
	sealed, err := a.Seal(nil, plain)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		c := bytes.Clone(sealed)
		c[i] ^= 1
		return c
	}
	rotated := newTestSealer(t, "cluster-a", 2) // holds key 1 too: opens a's datagrams
	if _, err := rotated.Open(nil, sealed); err != nil {
		t.Fatalf("rotation: the new primary's Sealer cannot open the old key: %v", err)
	}
	only2, err := NewSealer("cluster-a", 2, map[uint8][]byte{2: testKey(2)})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		s    *Sealer
		b    []byte
		want error
	}{
		{"other label", newTestSealer(t, "cluster-b", 1), sealed, ErrAuth},
		{"header changed", a, flip(40), ErrAuth},
		{"nonce changed", a, flip(HeaderSize), ErrAuth},
		{"body changed", a, flip(HeaderSize + nonceSize), ErrAuth},
		{"tag changed", a, flip(len(sealed) - 1), ErrAuth},
		{"unknown key", only2, sealed, ErrUnknownKey},
		{"short", a, sealed[:HeaderSize+SealOverhead-1], ErrShort},
		{"not sealed", a, plain, ErrShort},
		{"unsealed flag", a, append(bytes.Clone(plain), make([]byte, SealOverhead)...), ErrFlags},
		{"version", a, flip(0), ErrVersion},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.s.Open([]byte("keep"), c.b)
			if !errors.Is(err, c.want) {
				t.Fatalf("Open error %v, want %v", err, c.want)
			}
			if string(out) != "keep" {
				t.Fatalf("dst changed on error")
			}
		})
	}
}

func TestNewSealerRejects(t *testing.T) {
	for name, c := range map[string]struct {
		label   string
		primary uint8
		keys    map[uint8][]byte
	}{
		"no primary":   {"l", 3, map[uint8][]byte{1: testKey(1)}},
		"key id 0":     {"l", 1, map[uint8][]byte{0: testKey(0), 1: testKey(1)}},
		"short key":    {"l", 1, map[uint8][]byte{1: make([]byte, 16)}},
		"long label":   {string(make([]byte, 256)), 1, map[uint8][]byte{1: testKey(1)}},
		"primary zero": {"l", 0, map[uint8][]byte{0: testKey(1)}},
	} {
		if _, err := NewSealer(c.label, c.primary, c.keys); !errors.Is(err, ErrKey) {
			t.Errorf("%s: %v", name, err)
		}
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
		sealed, err := s.Seal(nil, plain)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(sealed)
	}
	f.Add(make([]byte, HeaderSize+SealOverhead))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := s.Open(nil, b)
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
		sealed, _ := s.Seal(nil, plain)
		buf := make([]byte, 0, len(sealed))
		b.Run("seal/"+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = s.Seal(buf[:0], plain)
			}
		})
		b.Run("open/"+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = s.Open(buf[:0], sealed); err != nil {
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
