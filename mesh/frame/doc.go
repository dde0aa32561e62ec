// Package frame owns the EventMeshFrame, the internal wire form the mesh
// gateway's protocol adaptors convert to and from: its codec, byte for
// byte, and its limits, and the conversion of RSB events and CloudEvents
// to EVENT frames.
//
// A frame is a 14-byte big-endian header
//
//	[magic 0xEF][version 1][msgType u8][flags u8][seq u32][keyCount u16][dataLen u32]
//
// followed by keyCount attributes, each [nameLen u16][name][valueLen u32][value]
// with name and value in UTF-8, and then dataLen bytes of data. msgType is
// STREAM_REQ (1), STREAM_CHUNK (2) or EVENT (3); flags has bit 0 done, bit 1
// hasError and bit 2 hasMeta (streaming), bits 3–7 reserved; seq numbers a
// chunk within its stream and is 0 otherwise.
//
// Marshal and Append encode a Frame, Unmarshal decodes one. Both enforce
// the limits of params.go (frame, data, attribute count, name and value
// sizes) and refuse names and values that are not valid UTF-8, each
// refusal wrapping an exported sentinel error. Unmarshal takes untrusted
// input: it checks every length against the bytes it has, accepts exactly
// one frame (no trailing bytes) and never panics. Attributes keep their
// wire order, duplicates included, so Marshal(Unmarshal(b)) gives b back;
// Get returns the last value of a name, as a map filled in wire order
// would.
//
// An EVENT frame carries a CloudEvent: every attribute (specversion
// included) as a frame attribute, the data as the frame's data.
// FromCloudEvent and Frame.CloudEvent convert between the two, FromRSB and
// Frame.RSB between frames and RSB events, through package cloudevent, so
// every adaptor maps RSB events the same way. The emttl attribute gives an
// event a time to live in milliseconds from its time attribute; Expired
// tells whether it has passed, and an expired event is not delivered (its
// caller counts it).
package frame
