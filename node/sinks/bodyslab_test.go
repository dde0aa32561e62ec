package sinks

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"
)

// TestBodySlabsClone checks that clones hold the input, share no memory
// with it, cannot be appended into a neighbour, and sit in slabs no larger
// than the amplification bound of params.go.
func TestBodySlabsClone(t *testing.T) {
	var s BodySlabs
	src := make([]byte, 2*MaxSlabBody)
	for i := range src {
		src[i] = byte(i * 7)
	}
	var clones [][]byte
	var wants [][]byte
	for round := range 3 {
		for _, n := range []int{1, 30, 170, minSlabBody - 1, minSlabBody, 513, 1100, 1024, 3000, MaxSlabBody, MaxSlabBody + 1, 7000} {
			in := src[round : round+n]
			c := s.Clone(in)
			if !bytes.Equal(c, in) {
				t.Fatalf("clone of %d bytes differs", n)
			}
			if cap(c) != len(c) {
				t.Fatalf("clone of %d bytes has capacity %d", n, cap(c))
			}
			if &c[0] == &in[0] {
				t.Fatalf("clone of %d bytes aliases its input", n)
			}
			if n >= minSlabBody && n <= MaxSlabBody {
				slab := cap(s.cur[bodySlabClass(n)])
				if slab >= 2*bodySlabEvents*n {
					t.Fatalf("body of %d bytes in a slab of %d: more than %d times its size", n, slab, 2*bodySlabEvents)
				}
				if slab < bodySlabEvents*n {
					t.Fatalf("body of %d bytes in a slab of %d: fewer than %d fit", n, slab, bodySlabEvents)
				}
			}
			clones = append(clones, c)
			wants = append(wants, bytes.Clone(in))
		}
	}
	// Appending to a clone reallocates: its neighbours keep their bytes.
	for i := range clones {
		_ = append(clones[i], 0xff, 0xfe)
	}
	clear(src)
	for i := range clones {
		if !bytes.Equal(clones[i], wants[i]) {
			t.Fatalf("clone %d changed", i)
		}
	}
	if c := s.Clone(nil); len(c) != 0 {
		t.Fatalf("clone of nothing: %d bytes", len(c))
	}
}

// TestBodySlabsShare checks that small bodies of one class share a slab.
func TestBodySlabsShare(t *testing.T) {
	var s BodySlabs
	body := make([]byte, 1100)
	a, b := s.Clone(body), s.Clone(body)
	if d := uintptr(unsafe.Pointer(&b[0])) - uintptr(unsafe.Pointer(&a[0])); d != uintptr(len(body)) {
		t.Fatalf("second body %d bytes after the first, want %d", d, len(body))
	}
}

// BenchmarkBodyCopy compares copying received bodies into slabs with an
// allocation per body.
func BenchmarkBodyCopy(b *testing.B) {
	for _, n := range []int{170, 1100, 4000} {
		body := make([]byte, n)
		b.Run(fmt.Sprintf("slabs/%d", n), func(b *testing.B) {
			var s BodySlabs
			b.SetBytes(int64(n))
			for b.Loop() {
				_ = s.Clone(body)
			}
		})
		b.Run(fmt.Sprintf("alone/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				_ = bytes.Clone(body)
			}
		})
	}
}
