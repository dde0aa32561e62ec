// Package frame is the codec of the RSB socket protocol: the server's
// greeting, the length framing and the parsing of the Notification each
// frame carries. It has no goroutines and opens no sockets; the server
// (package rsbsocket) and the client (package sockclient) read and write
// through it.
//
// # Wire protocol
//
// After accepting a connection the server writes exactly 4 zero bytes; the
// client writes nothing first, reads exactly 4 bytes and gives up when they
// are not zero (ErrBadHandshake). Then each direction is a sequence of
// frames: a 4-byte little-endian uint32 length followed by that many bytes
// of one serialized rsb.protocol.Notification (never fragmented). A frame of
// length zero cannot be a Notification (event_id is required) and is a
// protocol error (ErrEmptyFrame). Frames above the reader's maximum
// (DefaultMaxFrameSize, 64 MiB, unless it sets its own) are refused before
// anything is allocated (ErrFrameTooLarge).
//
// # What it owns
//
//   - The greeting: WriteHandshake, ReadHandshake.
//   - The framing: AppendFrame and AppendHeader encode; ReadFrame,
//     ReadFrameSized, ReadFrameRoom and SkipFrame decode from a
//     bufio.Reader, Buffered tells whether a whole frame is buffered.
//     Large bodies are grown as their bytes arrive, or allocated whole
//     within a LargeBudget, so a peer that announces a large frame and
//     stalls holds little memory.
//   - The Notification: ParseFrame, FrameParser and ParseOwned extract
//     scope, event id, wire schema, method and payload from a frame body
//     without decoding it fully, so frames are relayed byte for byte;
//     Frame.Wrap writes around a body in the Room it was read with.
//
// Its limits are in params.go.
package frame
