// Package sockio holds the socket writes the RSB socket server (package
// rsbsocket) and client (package sockclient) share: BatchWriter coalesces
// frames into one writev each, DirectWriter writes what a socket takes
// without blocking, GrowUnixBuffer sizes a Unix socket's send buffer, and
// the registry of the process's own client connections lets a server tell
// them from clients in other processes. It starts no goroutines.
package sockio
