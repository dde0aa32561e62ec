package bridge

import (
	"fmt"
	"strings"

	"github.com/rsbd/rsbd/cloudevent"
)

// MapAttrs reads the attributes of a binding that carries them in a map
// of typed values (AMQP headers, AMQP 1.0 application properties): the
// entries whose names start with prefix or alt, as attributes named
// prefix+rest, their values turned into canonical strings by str. Other
// entries are ignored. A map of more than limit entries is refused with
// cloudevent.ErrTooManyAttributes; one and many name an entry and the
// entries in errors.
func MapAttrs(m map[string]any, prefix, alt string, limit int, one, many string, str func(any) (string, error)) ([]cloudevent.Attr, error) {
	if len(m) > limit {
		return nil, fmt.Errorf("%w: %d %s, at most %d", cloudevent.ErrTooManyAttributes, len(m), many, limit)
	}
	attrs := make([]cloudevent.Attr, 0, len(m))
	for k, v := range m {
		name, ok := strings.CutPrefix(k, prefix)
		if !ok {
			if name, ok = strings.CutPrefix(k, alt); !ok {
				continue
			}
		}
		s, err := str(v)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", one, clipName(k), err)
		}
		attrs = append(attrs, cloudevent.Attr{Name: prefix + name, Value: s})
	}
	return attrs, nil
}

// clipName shortens a hostile entry name quoted in an error.
func clipName(s string) string {
	if len(s) > maxQuotedName {
		return s[:maxQuotedName] + "…"
	}
	return s
}
