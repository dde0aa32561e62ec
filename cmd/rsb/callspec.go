package main

import (
	"fmt"
	"strings"

	"github.com/rsbd/rsbd/client"
)

// callSpec is a parsed 'URI/method(ARG)'.
type callSpec struct {
	server client.URI // the server's bus and scope
	method string
	arg    string // an event spec; "" for no argument
}

// parseCallSpec parses 'URI/method(ARG)': the method is the last component
// before the opening parenthesis, the URI (or bare scope) before it names the
// server, and ARG, up to the final ')', is an event spec.
func parseCallSpec(s string, def client.URI) (callSpec, error) {
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") || len(s) < open+2 {
		return callSpec{}, fmt.Errorf("%w: %q: want URI/method(ARG)", errSpec, s)
	}
	head, arg := s[:open], s[open+1:len(s)-1]
	slash := strings.LastIndexByte(head, '/')
	if slash < 0 {
		return callSpec{}, fmt.Errorf("%w: %q: no method scope before the method name", errSpec, s)
	}
	method := head[slash+1:]
	if !validComponent(method) {
		return callSpec{}, fmt.Errorf("%w: method name %q is not [-_a-zA-Z0-9]+", errSpec, method)
	}
	serverPart := head[:slash]
	if strings.HasSuffix(serverPart, "/") {
		return callSpec{}, fmt.Errorf("%w: %q: empty scope component before the method", errSpec, s)
	}
	if serverPart == "" || strings.HasSuffix(serverPart, ":") {
		serverPart += "/"
	}
	u, err := client.ParseURIDefault(serverPart, def)
	if err != nil {
		return callSpec{}, err
	}
	return callSpec{server: u, method: method, arg: arg}, nil
}

// validComponent reports whether s is one scope component.
func validComponent(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
