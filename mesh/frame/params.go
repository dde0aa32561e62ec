package frame

// Wire constants and limits of the frame. The limits are the reference
// implementation's (EventMesh FrameLimits), checked when encoding and when
// decoding, so a frame this package writes is one every peer reads.
const (
	// Magic is the first byte of every frame.
	Magic = 0xEF

	// Version is the frame format version; any other is refused.
	Version = 1

	// HeaderLen is the length of the fixed header in bytes.
	HeaderLen = 14

	// MaxFrameBytes bounds a whole frame: header, attributes and data.
	MaxFrameBytes = 16 << 20

	// MaxDataBytes bounds a frame's data.
	MaxDataBytes = 8 << 20

	// MaxAttrs bounds the attributes of a frame.
	MaxAttrs = 64

	// MaxNameBytes bounds an attribute name in bytes.
	MaxNameBytes = 256

	// MaxValueBytes bounds an attribute value in bytes.
	MaxValueBytes = 4 << 10

	// attrOverhead is what an attribute costs besides its name and value:
	// the two length fields.
	attrOverhead = 2 + 4
)
