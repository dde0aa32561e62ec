// Package testutil holds the helpers every test package of the module
// shares: WaitFor and WaitForMsg poll a condition under a deadline, so no
// test sleeps to wait. Its callers are tests and the test-support packages
// (client/clienttest); nothing of the daemon imports it.
package testutil
