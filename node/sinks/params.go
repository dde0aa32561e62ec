package sinks

// Limits of the local sinks. Every structure here is fed by events from the
// network or from local publishers, so each has a bound.
const (
	// RecentEventsSize bounds the event ids remembered to drop duplicates
	// while a narrowed-away scope lingers.
	RecentEventsSize = 8192
	// minSlabBody, MaxSlabBody and bodySlabEvents size the slabs that
	// received event bodies are copied into when they leave a reader's
	// buffer (see BodySlabs): a body of 512 B to 4 KiB shares a slab of 4
	// to 32 KiB holding bodySlabEvents to twice as many bodies of its size,
	// one allocation for all of them. A Handler that retains such an event
	// keeps its whole slab alive: less than 16 times the event's serialized
	// size (a 1 KiB event pins a 16 KiB slab shared with 13 others). Smaller
	// bodies (cheap to allocate, while a slab is zeroed first) and larger
	// ones are copied alone. The slabs save the subscriber an allocation per
	// event (BenchmarkBodyCopy).
	minSlabBody    = 512
	MaxSlabBody    = 4 << 10
	bodySlabEvents = 8
	// bodySlabClasses is the number of slab sizes: bodySlabEvents*minSlabBody
	// doubling up to bodySlabEvents*MaxSlabBody.
	bodySlabClasses = 4

	// minIndexSlots is the smallest (and initial) length of the index.
	minIndexSlots = 8
	// maxIndexDepth is the depth from which scopes share one depth count.
	maxIndexDepth = 31
)
