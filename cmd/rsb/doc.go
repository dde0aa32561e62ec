// Command rsb is rsbd's implementation of the RSB command-line tools:
//
//	rsb send [--method M] [--meta-data K=V]... [--timestamp K=TIME]... [--cause ID:SEQ]... EVENT-SPEC [URI]
//	rsb logger [--style detailed|compact|columns|payload|json|meta-data|timeline|monitor|statistics|discard] [--filter SPEC]... [--stop-after N] [--max-queued-events N] [URI...]
//	rsb call [--timeout D] [--no-wait] 'URI/method(ARG)'
//	rsb bridge [--filter SPEC]... 'IN -> [|FILTER|]... OUT' | 'A <-> B' [; ...]
//	rsb introspect [--style object-tree|monitor|json] [--response-timeout D] [--daemons] [URI...]
//	rsb info [--configuration] [--transports] [--converters] [--participants] [--verbose] [URI]
//	rsb web [--address A] [--port N] [--response-timeout D] [URI]
//
// URIs are written as RSB writes them (socket://host:port/scope, socket:/scope
// or just /scope); host and port default to the RSB configuration
// (transport.socket.host and transport.socket.port, e.g. from
// RSB_TRANSPORT_SOCKET_PORT) and then to the local daemon, localhost:55555.
// Run "rsb help" for the event-spec and filter syntax.
package main
