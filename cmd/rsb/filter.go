package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// errFilter is wrapped by every filter-spec parse error.
var errFilter = errors.New("bad filter spec")

// parseFilter parses a logger --filter SPEC, "KIND VALUE" or "KIND=VALUE"
// with the value optionally double-quoted:
//
//	scope /a/b          events on /a/b/ and below
//	method REQUEST      events with that method ("" for none)
//	origin UUID         events sent by that participant
//	wire-schema S       events with that wire schema
//	regex RE            events whose payload bytes match RE
func parseFilter(spec string) (client.Filter, error) {
	kind, value, err := splitFilter(spec)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "scope":
		sc, err := scope.Parse(value)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errFilter, err)
		}
		return client.ScopeFilter(sc), nil
	case "method":
		return client.MethodFilter(value), nil
	case "origin":
		id, err := notification.ParseUUID(value)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errFilter, err)
		}
		return client.OriginFilter(id), nil
	case "wire-schema", "schema":
		return client.WireSchemaFilter(value), nil
	case "regex":
		if len(value) > maxRegexp {
			return nil, fmt.Errorf("%w: pattern longer than %d bytes", errFilter, maxRegexp)
		}
		re, err := regexp.Compile(value)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errFilter, err)
		}
		return func(ev *notification.Event) bool { return re.Match(ev.Data) }, nil
	}
	return nil, fmt.Errorf("%w: unknown kind %q (want scope, method, origin, wire-schema or regex)", errFilter, kind)
}

// splitFilter splits "KIND VALUE" or "KIND=VALUE" and unquotes the value.
func splitFilter(spec string) (string, string, error) {
	spec = strings.TrimSpace(spec)
	i := strings.IndexAny(spec, " \t=")
	if i <= 0 {
		return "", "", fmt.Errorf("%w: %q: want KIND VALUE", errFilter, spec)
	}
	kind := strings.ToLower(spec[:i])
	value := spec[i+1:]
	if spec[i] != '=' {
		value = strings.TrimSpace(value)
	}
	if strings.HasPrefix(value, `"`) {
		v, rest, err := parseQuoted(value)
		if err != nil || rest != "" {
			return "", "", fmt.Errorf("%w: %q: bad quoted value", errFilter, spec)
		}
		value = v
	}
	return kind, value, nil
}
