package main

import (
	"strings"
	"testing"
)

// TestSendReportsTypedScope: a scope with a space is reported as typed,
// not as the percent-escaped text URL parsing makes of it.
func TestSendReportsTypedScope(t *testing.T) {
	r := runTool(bg(), "", "send", "1", "/robot arm/")
	if r.code != exitUsage || strings.Contains(r.stderr, "%20") ||
		!strings.Contains(r.stderr, `character " " at byte 6 of "/robot arm/"`) {
		t.Fatalf("code %d stderr %q", r.code, r.stderr)
	}
}
