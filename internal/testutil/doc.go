// Package testutil holds the helpers every test package of the module
// shares: WaitFor and WaitForMsg poll a condition under a deadline, so no
// test sleeps to wait, and the daemon starter runs daemon processes for
// tests. The starter owns what every such test needs of a process: Build
// compiles a main package once per test binary, StartDaemon runs it in a
// clean directory and environment (optionally in a network namespace) and
// waits for its ready file (ReadyInfo), and a Daemon is signalled, killed,
// terminated, scraped (/metrics) and read (its logs, its goroutines when
// it hangs) until the test's cleanup stops it and shows the end of its
// logs if the test failed. Cluster logic (pools, joins, clients) stays
// with the callers, client/clienttest and e2e.
//
// GoldenHex reads a golden vector written by hand in hex, with comments;
// Do sends an HTTP request and reads the whole reply.
//
// Its callers are tests and the test-support packages; nothing of the
// daemon imports it.
package testutil
