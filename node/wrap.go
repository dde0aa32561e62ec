package node

import (
	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/rsbsocket/frame"
)

// wholeRoom is the room the socket server keeps around every frame body,
// so that a frame bound for the network is wrapped in place (wrapFrame).
var wholeRoom = frame.Room{Head: fragmentation.MaxWholePrefixSize, Tail: fragmentation.WholeTrailerSize}

// wholeTrailerBytes is fragmentation.AppendWholeTrailer's output.
var wholeTrailerBytes = fragmentation.AppendWholeTrailer(nil)

// wrapFrame returns f's body wrapped in its unfragmented
// FragmentedNotification, in place around the body (Frame.Wrap), or nil
// when the frame has no room for it.
func wrapFrame(f *frame.Frame) []byte {
	var pre [fragmentation.MaxWholePrefixSize]byte
	rec, ok := f.Wrap(fragmentation.AppendWholePrefix(pre[:0], len(f.Body)), wholeTrailerBytes)
	if !ok {
		return nil
	}
	return rec
}
