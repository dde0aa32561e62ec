// Package web serves introspection over HTTP: the JSON endpoints of the
// RSB tools' web interface, /api/introspection/snapshot and
// /api/introspection/search (query, start, limit), each answering
// {"data": ...} or {"error": "..."}, and a page for people, embedded in
// the binary: the host, process and participant tree, the scope tree
// with live event and byte rates, the daemons of the cluster, and a live
// tail of a chosen scope.
//
// Besides the RSB endpoints it serves /api/scopes (events and bytes per
// scope, with rates over the last RateWindow), /api/daemons (the daemon
// survey of package introspection) and /api/tail?scope=S, Server-Sent
// Events with one JSON event each.
//
// The scope rates come from a listener on "/" that the Handler opens when
// /api/scopes is first asked for and closes after IdleRates without a
// request: while it is open the bus sends this process every event. Each
// tail is a listener of its own, at most maxTails at once, each with a
// bounded queue that drops the oldest events when the browser falls
// behind.
//
// The Handler owns the rate listener and the tails; Close ends them.
package web
