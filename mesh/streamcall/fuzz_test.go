package streamcall

import (
	"bytes"
	"testing"
	"time"

	"github.com/rsbd/rsbd/mesh/frame"
	"github.com/rsbd/rsbd/scope"
)

// FuzzParseFrame: the bytes of an event on a call or reply scope never
// make the parsers panic; a request or chunk they accept encodes to a
// frame that parses to the same request or chunk.
func FuzzParseFrame(f *testing.F) {
	req := requestFrame(&Request{Prompt: []byte("p"), Model: "m", Conv: "c", Session: "s1",
		ReplyTo: scope.MustParse("/r/"), Timeout: time.Second, Attrs: []frame.Attr{{Name: "x", Value: "y"}}})
	chunk := chunkFrame("s1", &Chunk{Seq: 7, Done: true, Data: []byte("d"), EventType: "t", Err: "e", Meta: "{}"})
	for _, fr := range []*frame.Frame{req, chunk} {
		b, _ := frame.Marshal(fr)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if fr, err := decode(b, frame.StreamReq); err == nil {
			r, err := parseRequest(fr)
			if err != nil {
				return
			}
			again, err := parseRequest(requestFrame(r))
			if err != nil || again.Session != r.Session || again.ReplyTo != r.ReplyTo || !bytes.Equal(again.Prompt, r.Prompt) ||
				again.Model != r.Model || again.Conv != r.Conv || len(again.Attrs) != len(r.Attrs) {
				t.Fatalf("request %+v came back as %+v (%v)", r, again, err)
			}
		}
		if fr, err := decode(b, frame.StreamChunk); err == nil {
			sid, c, err := parseChunk(fr)
			if err != nil {
				return
			}
			sid2, c2, err := parseChunk(chunkFrame(sid, &c))
			if err != nil || sid2 != sid || c2.Seq != c.Seq || c2.Done != c.Done || c2.Err != c.Err || !bytes.Equal(c2.Data, c.Data) {
				t.Fatalf("chunk %+v came back as %+v (%v)", c, c2, err)
			}
		}
	})
}

// FuzzReceiver drives a Receiver with chunks in any order and clock steps:
// what it hands over is always 0, 1, 2, … with nothing skipped or
// repeated, and once it fails or finishes it hands over nothing new.
func FuzzReceiver(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add([]byte{1, 0, 3, 2, 0xff, 5})
	f.Add([]byte{2, 0x80, 0x80, 0x80, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		r := NewReceiver(t0.Add(time.Minute), time.Second)
		now, next := t0, uint32(0)
		for i, op := range ops {
			if op&0x80 != 0 {
				now = now.Add(time.Duration(op&0x7f) * 100 * time.Millisecond)
				r.Tick(now)
			} else {
				r.Push(Chunk{Seq: uint32(op & 0x3f), Done: op&0x40 != 0}, now)
			}
			for {
				c, ok := r.Next()
				if !ok {
					break
				}
				if c.Seq != next {
					t.Fatalf("op %d: handed seq %d, want %d", i, c.Seq, next)
				}
				next++
			}
			if r.Done() && r.Err() != nil {
				t.Fatal("done and failed")
			}
		}
	})
}
