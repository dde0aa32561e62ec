// Package introspection is rsbd's remote side of RSB introspection: it
// learns the hosts, processes and participants of a bus and how they
// fare, as the RSB tools' introspection does, and it carries the
// daemons' own view of the cluster.
//
// A Collector runs on a client.Bus. It listens on
// /__rsb/introspection/participants/ for the Hello and Bye events every
// RSB process publishes for its participants, surveys them (a void event
// with method SURVEY, answered by a Hello per participant), and calls the
// echo method of each process's server on
// /__rsb/introspection/hosts/<HOST-ID>/<PID>/ at an interval. An echo
// reply carries the request's send and receive times (user times
// request.send and request.receive); with the reply's own send and
// receive times they give, as NTP's offset estimation does, the clock
// offset of the remote process and the latency to it (the median of the
// last samples). A process that answers is RUNNING, one whose echo times
// out CRASHED.
//
// What the Collector learns is kept by a DB, a pure state machine (Hello,
// Bye, echo samples and timeouts in; snapshots out) bounded in hosts,
// processes and participants: Hellos past the bounds are dropped and
// counted. Snapshot is the tree the tools print (WriteTree), serve as JSON
// (the rsb-tools-cl layout: hosts, processes and participants nested as
// "children") and search (Search).
//
// Daemons answer a survey of their own on /__rsb/rsbd/daemons/
// (ServeDaemon, SurveyDaemons): each replies with a DaemonStatus, its
// peers, the scopes its clients listen to, its traffic and its drops.
//
// Goroutines: a Collector owns one that pings processes (and a bounded
// number of echo calls it starts); its Listener's handler feeds the DB
// under the Collector's mutex. Close stops them and is idempotent.
package introspection
