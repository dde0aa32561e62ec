package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rsbd/rsbd/cloudevent"
)

// Errors of Parse.
var (
	// ErrSyntax: the input is not a filter list: bad JSON, an unknown
	// dialect, a wrong value type, or past a limit.
	ErrSyntax = errors.New("filter: malformed filter")
	// ErrUnsupported: a dialect the Subscriptions API defines that this
	// package does not implement (sql).
	ErrUnsupported = errors.New("filter: unsupported dialect")
)

// Filter decides whether an event passes. The zero Filter passes every
// event. A Filter is immutable and safe for concurrent use.
type Filter struct {
	all []expr
}

// expr is one expression.
type expr interface {
	match(e *cloudevent.Event) bool
}

// Match reports whether e passes every expression of f.
func (f Filter) Match(e *cloudevent.Event) bool {
	return matchAll(f.all, e)
}

// Parse parses a filter list: a JSON array of expressions, or one
// expression. An empty input or an empty array is the Filter that passes
// everything.
func Parse(b []byte) (Filter, error) {
	if len(b) > MaxInputBytes {
		return Filter{}, fmt.Errorf("%w: %d bytes, at most %d", ErrSyntax, len(b), MaxInputBytes)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return Filter{}, nil
	}
	p := &parser{}
	if b[0] != '[' {
		b = append(append([]byte{'['}, b...), ']')
	}
	all, err := p.list(b, 0)
	if err != nil {
		return Filter{}, err
	}
	return Filter{all: all}, nil
}

// parser counts the expressions parsed so far.
type parser struct{ n int }

// count adds n expressions and checks the limit.
func (p *parser) count(n int) error {
	p.n += n
	if p.n > MaxExpressions {
		return fmt.Errorf("%w: more than %d expressions", ErrSyntax, MaxExpressions)
	}
	return nil
}

// list parses a JSON array of expressions.
func (p *parser) list(b []byte, depth int) ([]expr, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, fmt.Errorf("%w: want an array of expressions: %w", ErrSyntax, err)
	}
	out := make([]expr, 0, len(raws))
	for _, raw := range raws {
		x, err := p.expr(raw, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// expr parses one expression: an object with exactly one dialect.
func (p *parser) expr(b []byte, depth int) (expr, error) {
	if depth >= MaxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrSyntax, MaxDepth)
	}
	if err := p.count(1); err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || len(obj) != 1 {
		return nil, fmt.Errorf("%w: an expression is an object with one dialect", ErrSyntax)
	}
	for dialect, v := range obj {
		switch dialect {
		case "exact", "prefix", "suffix":
			return p.attrs(dialect, v)
		case "all", "any":
			xs, err := p.list(v, depth+1)
			if err != nil {
				return nil, err
			}
			if dialect == "all" {
				return allOf(xs), nil
			}
			return anyOf(xs), nil
		case "not":
			x, err := p.expr(v, depth+1)
			if err != nil {
				return nil, err
			}
			return notOf{x}, nil
		case "sql":
			return nil, fmt.Errorf("%w: sql", ErrUnsupported)
		default:
			return nil, fmt.Errorf("%w: unknown dialect %q", ErrSyntax, truncate(dialect))
		}
	}
	return nil, fmt.Errorf("%w: empty expression", ErrSyntax)
}

// attrs parses the attribute map of exact, prefix or suffix.
func (p *parser) attrs(dialect string, b []byte) (expr, error) {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil || len(m) == 0 {
		return nil, fmt.Errorf("%w: %s takes a non-empty object of attribute strings", ErrSyntax, dialect)
	}
	if err := p.count(len(m) - 1); err != nil {
		return nil, err
	}
	for name := range m {
		if err := cloudevent.ValidName(name); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrSyntax, dialect, err)
		}
	}
	return attrMatch{dialect: dialect, want: m}, nil
}

// attrMatch is an exact, prefix or suffix expression.
type attrMatch struct {
	dialect string
	want    map[string]string
}

func (a attrMatch) match(e *cloudevent.Event) bool {
	for name, want := range a.want {
		v, ok := attr(e, name)
		if !ok {
			return false
		}
		switch a.dialect {
		case "exact":
			ok = v == want
		case "prefix":
			ok = strings.HasPrefix(v, want)
		default:
			ok = strings.HasSuffix(v, want)
		}
		if !ok {
			return false
		}
	}
	return true
}

// allOf holds when every expression holds.
type allOf []expr

func (x allOf) match(e *cloudevent.Event) bool { return matchAll(x, e) }

// anyOf holds when one expression holds.
type anyOf []expr

func (x anyOf) match(e *cloudevent.Event) bool {
	for _, y := range x {
		if y.match(e) {
			return true
		}
	}
	return false
}

// notOf holds when its expression does not.
type notOf struct{ x expr }

func (x notOf) match(e *cloudevent.Event) bool { return !x.x.match(e) }

// matchAll reports whether every expression of xs holds for e.
func matchAll(xs []expr, e *cloudevent.Event) bool {
	for _, x := range xs {
		if !x.match(e) {
			return false
		}
	}
	return true
}

// attr returns the value of attribute name of e, and whether e has it.
func attr(e *cloudevent.Event, name string) (string, bool) {
	var v string
	switch name {
	case cloudevent.AttrSpecVersion:
		v = cloudevent.SpecVersion
	case cloudevent.AttrID:
		v = e.ID
	case cloudevent.AttrSource:
		v = e.Source
	case cloudevent.AttrType:
		v = e.Type
	case cloudevent.AttrSubject:
		v = e.Subject
	case cloudevent.AttrTime:
		v = e.Time
	case cloudevent.AttrDataContentType:
		v = e.DataContentType
	case cloudevent.AttrDataSchema:
		v = e.DataSchema
	default:
		v, ok := e.Extensions[name]
		return v, ok
	}
	return v, v != ""
}

// truncate shortens s for an error message.
func truncate(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}
