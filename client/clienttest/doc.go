// Package clienttest starts rsbd clusters on loopback for the tests of RSB
// clients and tools: in-process nodes (StartNodes) and rsbd daemon processes
// built from cmd/rsbd (StartDaemons). Every cluster gets a private multicast
// pool, so parallel tests never hear each other. The processes themselves
// (build, start, ready file, stop, metrics, logs) are internal/testutil's
// daemon starter; the binary it builds lives in a temporary directory that
// testutil.RemoveBinaries deletes, so call that from TestMain after m.Run.
package clienttest
