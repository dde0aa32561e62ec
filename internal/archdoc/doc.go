// Package archdoc keeps docs/ARCHITECTURE.md true: its test compares the
// package table there (each package of the module, what it owns, and which
// of the module's packages it imports) with what `go list` reports, and
// fails with the table as it should read when they differ. It has no code
// of its own besides the table's parser.
package archdoc
