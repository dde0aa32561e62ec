// Package spinpay decides whether a poll for an answer pays: the UDP reader
// (transport) and the socket server's reader (rsbsocket) poll their sockets
// for the answer to a reply instead of sleeping, which saves a wake-up when
// the answer comes soon and the CPU is otherwise idle. On a busy host the
// same poll holds a CPU other threads need, the scheduler counts the
// polling thread as a CPU hog and preempts it, and the answer arrives while
// it waits for the CPU: the poll makes round trips slower. A Gate tracks
// how often polls end with the answer and stops polling while too few do,
// with an occasional probe poll to notice when polling pays again.
//
// A Gate is a pure decision: it owns no goroutine and no socket; its
// callers poll and report the outcome.
package spinpay
