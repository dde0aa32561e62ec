// Package clienttest starts rsbd clusters on loopback for the tests of RSB
// clients and tools: in-process nodes (StartNodes) and rsbd daemon processes
// built from cmd/rsbd (StartDaemons). Every cluster gets a private multicast
// pool, so parallel tests never hear each other.
//
// Binaries built by Build live in a temporary directory that RemoveBinaries
// deletes; call it from TestMain after m.Run.
package clienttest
