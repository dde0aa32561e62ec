// Package rsbpb holds the Go code generated from RSB's protocol messages
// (proto/rsb/protocol/*.proto, package rsb.protocol): Notification,
// FragmentedNotification, EventId and EventMetaData. The sub-packages hold the
// introspection (Hello, Bye), operating-system (Process, Host) and collections
// messages. Regenerate with `make proto`; never edit the .pb.go files.
package rsbpb
