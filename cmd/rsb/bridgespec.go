package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rsbd/rsbd/client"
)

// errBridgeSpec is wrapped by every bridge-spec error, a loop included.
var errBridgeSpec = errors.New("bad bridge spec")

// bridgeEdge is one direction of a bridge connection: events on in's scope
// (at in's daemon) passing every filter are published below out's scope.
type bridgeEdge struct {
	in, out client.URI
	filters []string // logger filter specs, as written
}

// parseBridgeSpec parses "IN -> OUT" and "A <-> B" connections separated
// by ';'. Filters, written as the logger's --filter specs between bars
// (IN -> |method M| |scope /a| OUT), may follow the arrow; a ';' or an
// arrow between bars belongs to the filter. URIs take their host and port
// from def when they leave them out.
func parseBridgeSpec(spec string, def client.URI) ([]bridgeEdge, error) {
	var edges []bridgeEdge
	for _, conn := range splitOutsideBars(spec, ";") {
		if strings.TrimSpace(conn) == "" {
			continue
		}
		es, err := parseConnection(conn, def)
		if err != nil {
			return nil, err
		}
		edges = append(edges, es...)
	}
	if len(edges) == 0 {
		return nil, fmt.Errorf("%w: no connection (want 'IN -> OUT' or 'A <-> B')", errBridgeSpec)
	}
	return edges, checkLoops(edges)
}

// parseConnection parses one "IN -> [|F|]... OUT" or "A <-> [|F|]... B".
func parseConnection(conn string, def client.URI) ([]bridgeEdge, error) {
	both := true
	parts := splitOutsideBars(conn, "<->")
	if len(parts) == 1 {
		both, parts = false, splitOutsideBars(conn, "->")
	}
	if len(parts) != 2 {
		return nil, fmt.Errorf("%w: %q: want one -> or <->", errBridgeSpec, strings.TrimSpace(conn))
	}
	in, err := parseEndpoint(parts[0], def)
	if err != nil {
		return nil, err
	}
	filters, rest, err := takeFilters(parts[1])
	if err != nil {
		return nil, err
	}
	out, err := parseEndpoint(rest, def)
	if err != nil {
		return nil, err
	}
	edges := []bridgeEdge{{in: in, out: out, filters: filters}}
	if both {
		edges = append(edges, bridgeEdge{in: out, out: in, filters: filters})
	}
	return edges, nil
}

// parseEndpoint parses a URI of a connection.
func parseEndpoint(s string, def client.URI) (client.URI, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, " \t|") {
		return client.URI{}, fmt.Errorf("%w: %q: want one URI", errBridgeSpec, s)
	}
	return client.ParseURIDefault(s, def)
}

// takeFilters reads the |SPEC| blocks at the start of s and returns them
// and what follows.
func takeFilters(s string) ([]string, string, error) {
	var filters []string
	for {
		s = strings.TrimSpace(s)
		if !strings.HasPrefix(s, "|") {
			return filters, s, nil
		}
		end := strings.IndexByte(s[1:], '|')
		if end < 0 {
			return nil, "", fmt.Errorf("%w: %q: unterminated |filter|", errBridgeSpec, s)
		}
		f := s[1 : end+1]
		if _, err := parseFilter(f); err != nil {
			return nil, "", err
		}
		filters = append(filters, f)
		s = s[end+2:]
	}
}

// splitOutsideBars splits s at each sep that is not between bars.
func splitOutsideBars(s, sep string) []string {
	var parts []string
	inBars, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '|':
			inBars = !inBars
		case !inBars && strings.HasPrefix(s[i:], sep):
			parts = append(parts, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(parts, s[start:])
}

// overlaps reports whether endpoints a and b name the same daemon and
// scopes of which one contains the other: events published at one reach
// listeners at the other.
func overlaps(a, b client.URI) bool {
	return a.Addr() == b.Addr() && (a.Scope.Contains(b.Scope) || b.Scope.Contains(a.Scope))
}

// checkLoops refuses a spec along which an event could come back to where
// it started by another way than the direction it came: an edge whose
// output its own input hears, the same edge twice, or a cycle through
// three or more endpoints. A <-> B, which only leads back the way the
// event came, is allowed: forwarded events are tagged and never sent back
// (see bridgeTag).
func checkLoops(edges []bridgeEdge) error {
	for i, e := range edges {
		if overlaps(e.in, e.out) {
			return fmt.Errorf("%w: %s -> %s: the input hears the output (a loop)", errBridgeSpec, e.in, e.out)
		}
		for _, f := range edges[:i] {
			if overlaps(e.in, f.in) && overlaps(e.out, f.out) {
				return fmt.Errorf("%w: %s -> %s given twice (events would arrive twice)", errBridgeSpec, e.in, e.out)
			}
		}
	}
	for i := range edges {
		if path := cycleFrom(edges, i); path != nil {
			var names []string
			for _, k := range path {
				names = append(names, edges[k].in.String())
			}
			names = append(names, edges[path[0]].in.String())
			return fmt.Errorf("%w: %s loops (an event would come back where it started)", errBridgeSpec, strings.Join(names, " -> "))
		}
	}
	return nil
}

// feeds reports whether edge a's output reaches edge b's input.
func feeds(a, b bridgeEdge) bool { return overlaps(a.out, b.in) }

// cycleFrom returns edges forming a cycle that starts with edge start and
// visits at least three distinct endpoints (a walk of edges each feeding the
// next, none going straight back the way the previous came), or nil.
func cycleFrom(edges []bridgeEdge, start int) []int {
	var walk func(path []int, used map[int]bool) []int
	walk = func(path []int, used map[int]bool) []int {
		last := edges[path[len(path)-1]]
		for k, e := range edges {
			if !feeds(last, e) || overlaps(e.out, last.in) {
				continue // not connected, or straight back
			}
			if k == start && len(path) >= 2 {
				return path
			}
			if used[k] {
				continue
			}
			used[k] = true
			if p := walk(append(path, k), used); p != nil {
				return p
			}
			delete(used, k)
		}
		return nil
	}
	return walk([]int{start}, map[int]bool{start: true})
}
