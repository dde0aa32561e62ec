// Package operatingsystem holds the Go code generated from RSB's rsb.protocol.operatingsystem
// messages (proto/rsb/protocol/operatingsystem/*.proto). Regenerate with `make proto`.
package operatingsystem
