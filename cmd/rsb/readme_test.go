package main

import (
	"os"
	"strings"
	"testing"

	"github.com/rsbd/rsbd/client"
)

// TestReadmeExamples parses every rsb command line of the README with the
// tool's own parser, so the examples stay valid, and checks that each verb
// has one.
func TestReadmeExamples(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	def := client.DefaultURI()
	parsers := map[string]func([]string) error{
		"send":   func(a []string) error { _, err := parseSend(a, def); return err },
		"logger": func(a []string) error { _, err := parseLogger(a, def); return err },
		"call":   func(a []string) error { _, err := parseCall(a, def); return err },
		"bridge": func(a []string) error { _, err := parseBridge(a, def); return err },
	}
	seen := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		cmd, _, _ := strings.Cut(line, "#")
		rest, ok := strings.CutPrefix(strings.TrimSpace(cmd), "rsb ")
		if !ok {
			continue
		}
		args := shellWords(t, rest)
		parse := parsers[args[0]]
		if parse == nil {
			continue
		}
		seen[args[0]] = true
		if err := parse(args[1:]); err != nil {
			t.Errorf("README: rsb %s: %v", rest, err)
		}
	}
	for verb := range verbs {
		if parsers[verb] != nil && !seen[verb] {
			t.Errorf("the README has no example of rsb %s", verb)
		}
	}
}

// shellWords splits s at blanks outside single quotes, as sh does for the
// README's examples (which quote with ' only).
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, c := range s {
		switch {
		case c == '\'':
			quoted, inWord = !quoted, true
		case !quoted && (c == ' ' || c == '\t'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
