// Package filter owns the subscription filters of the CloudEvents
// Subscriptions API: expressions over an event's attributes that decide,
// before an event is queued for a subscriber, whether it gets it.
//
// A filter list is a JSON array of expressions (or one expression), all of
// which must hold. An expression is an object with exactly one dialect:
//
//	{"exact":  {"type": "com.example.t"}}      every attribute equals its value
//	{"prefix": {"subject": "/robot/"}}         every attribute starts with its value
//	{"suffix": {"source": "/arm"}}             every attribute ends with its value
//	{"all":    [expr, …]}                      every expression holds
//	{"any":    [expr, …]}                      one expression holds
//	{"not":    expr}                           the expression does not hold
//
// Comparisons are case-sensitive on the attributes' canonical string forms
// (package cloudevent); an absent attribute matches no exact, prefix or
// suffix. The sql dialect (CloudEvents SQL) is not supported and refused.
// Parse takes untrusted input: it bounds the input's size, the nesting
// depth and the number of expressions (params.go), and its errors wrap
// ErrSyntax or ErrUnsupported.
package filter
