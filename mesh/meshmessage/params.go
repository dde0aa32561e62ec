package meshmessage

// Limits of the Package codec.
const (
	// MaxPackage bounds a whole Package on the wire, prefix included: the
	// reference's TCP decoder refuses longer frames, so a peer never sends
	// one and a reader never buffers more for one client.
	MaxPackage = 4 << 20
)
