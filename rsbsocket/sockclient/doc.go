// Package sockclient is the client side of the RSB socket transport: Dial
// and DialConfig connect to a server over TCP ("host:port") or a Unix
// domain socket ("unix:PATH") and check its greeting, NewClientConn does
// the same over an established connection, and a ClientConn sends frames
// (Send, SendMany, TrySend) and receives them (Recv and its variants). It
// is the base of rsbd's Go RSB client (package client) and of the tools
// and benchmarks that speak the protocol directly; the frames are encoded
// and decoded by package frame.
//
// The package is not named client, which is the name of rsbd's RSB client
// package that imports it, and not conn, the name of countless variables
// holding connections: sockclient reads as "the RSB socket client" where
// it is used.
package sockclient
