package group

import (
	"crypto/md5"
	"encoding/hex"
	"sync"
	"sync/atomic"

	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport/datagram"
)

// GroupID is the id of a group: the MD5 digest of a normalized scope.
type GroupID = datagram.GroupID

// ID returns the group id of s: the MD5 digest of its normalized string. The
// zero Scope is treated as the root.
func ID(s scope.Scope) GroupID {
	ids := cachedIDs(s)
	return ids[len(ids)-1]
}

// Name returns the RSB group name of s: the lowercase hex MD5 digest of its
// normalized string cut to NameLen (31) characters. The zero Scope is treated
// as the root.
func Name(s scope.Scope) string {
	return NameOf(ID(s))
}

// NameOf returns the RSB group name of a group id: its lowercase hex form cut
// to NameLen (31) characters.
func NameOf(id GroupID) string {
	var buf [2 * len(GroupID{})]byte
	hex.Encode(buf[:], id[:])
	return string(buf[:NameLen])
}

// IDs returns the group ids of s and all its super-scopes, root first: the
// groups an event published on s is sent to. The result is a fresh slice the
// caller owns.
func IDs(s scope.Scope) []GroupID {
	ids := cachedIDs(s)
	out := make([]GroupID, len(ids))
	copy(out, ids)
	return out
}

// AppendIDs appends the group ids of s and all its super-scopes, root first,
// to dst and returns the extended slice. For a scope seen recently it neither
// hashes nor allocates (beyond growing dst).
func AppendIDs(dst []GroupID, s scope.Scope) []GroupID {
	return append(dst, cachedIDs(s)...)
}

// scopeString returns the normalized string of s, "/" for the zero Scope.
func scopeString(s scope.Scope) string {
	if s.IsZero() {
		return scope.Root.String()
	}
	return s.String()
}

// idOfString hashes a normalized scope string.
func idOfString(s string) GroupID {
	return md5.Sum([]byte(s))
}

// idCache maps a normalized scope string to the immutable slice of the group
// ids of its super-scopes. It is bounded by idCacheSize and emptied when full.
var idCache struct {
	m sync.Map // string -> []GroupID, never modified after Store
	n atomic.Int64
}

// cachedIDs returns the shared, read-only group ids of s and its super-scopes.
func cachedIDs(s scope.Scope) []GroupID {
	key := scopeString(s)
	if v, ok := idCache.m.Load(key); ok {
		return v.([]GroupID)
	}
	ids := computeIDs(key)
	if idCache.n.Add(1) > idCacheSize {
		idCache.m.Clear()
		idCache.n.Store(1)
	}
	idCache.m.Store(key, ids)
	return ids
}

// computeIDs hashes every super-scope prefix of the normalized string s,
// root first and s last.
func computeIDs(s string) []GroupID {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			n++
		}
	}
	ids := make([]GroupID, 0, n)
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			ids = append(ids, idOfString(s[:i+1]))
		}
	}
	return ids
}

// resetIDCache empties the cache (tests and benchmarks).
func resetIDCache() {
	idCache.m.Clear()
	idCache.n.Store(0)
}
