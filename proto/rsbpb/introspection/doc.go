// Package introspection holds the Go code generated from RSB's rsb.protocol.introspection
// messages (proto/rsb/protocol/introspection/*.proto). Regenerate with `make proto`.
package introspection
