package scope

const (
	// cacheEntries is how many recently parsed scopes a Cache remembers: a
	// decoder's stream usually repeats a handful of scopes.
	cacheEntries = 4

	// maxCachedLen is the longest scope, in bytes, a Cache remembers: a
	// long hostile scope is parsed every time rather than kept.
	maxCachedLen = 256
)
