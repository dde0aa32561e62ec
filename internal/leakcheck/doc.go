// Package leakcheck owns the goroutine-leak check of the tests: after the
// code under test closed everything, the program's goroutines must come
// back to what they were before it started.
package leakcheck
