package scope

// Cache remembers the last few scopes parsed from wire bytes, so that a
// decoder of a stream on which a few scopes repeat neither validates nor
// allocates them again. Its zero value is ready; it is not safe for
// concurrent use (give each decoding goroutine its own).
type Cache struct {
	entries [cacheEntries]cacheEntry
	next    int // the entry replaced next
}

// cacheEntry is a scope as it was on the wire and its parsed form.
type cacheEntry struct {
	raw string
	sc  Scope
}

// ParseBytes returns what Parse(string(b)) returns, without parsing or
// allocating when b equals one of the last few scopes parsed (of at most
// 256 bytes).
func (c *Cache) ParseBytes(b []byte) (Scope, error) {
	for i := range c.entries {
		if e := &c.entries[i]; !e.sc.IsZero() && e.raw == string(b) {
			return e.sc, nil
		}
	}
	sc, err := Parse(string(b))
	if err != nil || len(b) > maxCachedLen {
		return sc, err
	}
	raw := sc.s
	if len(raw) != len(b) {
		raw = string(b) // normalized on the way: the wire form differs
	}
	c.entries[c.next] = cacheEntry{raw: raw, sc: sc}
	c.next = (c.next + 1) % len(c.entries)
	return sc, nil
}
