// Package syncbuf owns Buffer, the output collector the tests and test
// helpers hand to a daemon they run (as its stdout and stderr, or its
// log writer) and read while it still writes.
package syncbuf
