package filter

// Limits of a filter list: a subscriber's filter runs for every event on
// its scope, so its size and depth are bounded.
const (
	// MaxInputBytes bounds the JSON of a filter list.
	MaxInputBytes = 16 << 10
	// MaxDepth bounds the nesting of all, any and not.
	MaxDepth = 8
	// MaxExpressions bounds the expressions and attribute conditions of a
	// list together.
	MaxExpressions = 64
)
