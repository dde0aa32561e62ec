//go:build !linux

package transport

// readable reports false: polling is implemented on Linux only, elsewhere
// a reader always parks.
func (s *spinner) readable() bool { return false }
