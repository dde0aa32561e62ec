// Package collections holds the Go code generated from RSB's rsb.protocol.collections
// messages (proto/rsb/protocol/collections/*.proto). Regenerate with `make proto`.
package collections
