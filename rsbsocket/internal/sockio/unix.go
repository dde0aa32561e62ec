package sockio

import "net"

// GrowUnixBuffer gives a Unix socket connection a send buffer of
// UnixSocketBuffer; other connections keep theirs. It is best effort: a
// smaller buffer only costs speed.
func GrowUnixBuffer(nc net.Conn) {
	if uc, ok := nc.(*net.UnixConn); ok {
		_ = uc.SetWriteBuffer(UnixSocketBuffer)
	}
}
