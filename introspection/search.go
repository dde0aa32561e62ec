package introspection

import (
	"errors"
	"fmt"
	"strings"
)

// ErrQuery is wrapped by the errors of Search for a query or range it
// cannot serve.
var ErrQuery = errors.New("introspection: bad query")

// Match is one node a Search found: its kind ("host", "process" or
// "participant") and the node itself, with its children.
type Match struct {
	Kind    string `json:"kind"`
	Element any    `json:"element"`
}

// Search finds the hosts, processes and participants of s, in tree order,
// each of whose words (letters, digits and -_/.:) occurs in one of the
// node's own values (case-insensitive), and returns limit of them (0: all)
// from the start'th on. The RSB tools' XPath queries are not supported:
// a query with other characters is an ErrQuery.
func Search(s Snapshot, query string, start, limit int) ([]Match, error) {
	words, err := queryWords(query)
	if err != nil {
		return nil, err
	}
	if start < 0 || limit < 0 {
		return nil, fmt.Errorf("%w: negative start or limit", ErrQuery)
	}
	var all []Match
	for _, h := range s.Hosts {
		if matches(words, h.ID, h.Hostname, h.MachineType, h.MachineVersion, h.SoftwareType, h.SoftwareVersion, h.State) {
			all = append(all, Match{Kind: "host", Element: h})
		}
		for _, p := range h.Processes {
			vals := append([]string{p.ID, p.ProgramName, p.DisplayName, p.User, p.RSBVersion, p.State}, p.Arguments...)
			if matches(words, append(vals, p.Transports...)...) {
				all = append(all, Match{Kind: "process", Element: p})
			}
			all = searchParticipants(all, words, p.Participants)
		}
	}
	if start > len(all) {
		return nil, fmt.Errorf("%w: start %d, but %d matches", ErrQuery, start, len(all))
	}
	all = all[start:]
	if limit > 0 && limit < len(all) {
		all = all[:limit]
	}
	if all == nil {
		all = []Match{}
	}
	return all, nil
}

func searchParticipants(out []Match, words []string, ps []Participant) []Match {
	for _, p := range ps {
		if matches(words, append([]string{p.Kind, p.ID, p.Scope, p.Type}, p.Transports...)...) {
			out = append(out, Match{Kind: "participant", Element: p})
		}
		out = searchParticipants(out, words, p.Children)
	}
	return out
}

// queryWords splits a query into lowercase words.
func queryWords(q string) ([]string, error) {
	for _, c := range q {
		if !(c == '-' || c == '_' || c == '/' || c == '.' || c == ':' || c == ' ' || c == '\t' ||
			c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return nil, fmt.Errorf("%w: %q: only words are supported", ErrQuery, q)
		}
	}
	words := strings.Fields(strings.ToLower(q))
	if len(words) == 0 {
		return nil, fmt.Errorf("%w: no search term", ErrQuery)
	}
	return words, nil
}

// matches reports whether every word occurs in one of vals.
func matches(words []string, vals ...string) bool {
	for _, w := range words {
		found := false
		for _, v := range vals {
			if strings.Contains(strings.ToLower(v), w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
