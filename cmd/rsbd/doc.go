// Command rsbd is the rsbd daemon: one per host, it carries RSB events
// between the local RSB socket clients (TCP port 55555) and the other
// daemons of the cluster.
//
// With no flags and no configuration file it serves one host: socket server
// on :55555, memberlist on 0.0.0.0:7946, multicast on the loopback interface,
// metrics on 127.0.0.1:9555. --join HOST:PORT makes a cluster; --interface
// names the NIC multicast uses between hosts, or --multicast=false sends
// each datagram to the interested peers instead. --socket-path PATH also
// serves the socket protocol on a Unix domain socket: local clients that
// dial unix:PATH (the Go client's URI option path=PATH) skip the TCP stack,
// which shortens every hop through the daemon. --cpu-latency 0 holds a PM
// QoS request that keeps idle CPUs polling while rsbd runs: every hop of a
// request/reply then skips the wake-up of a sleeping CPU (tens of
// microseconds on a virtual machine), at the cost of power.
//
// # Configuration
//
// Every setting is a flag and a key of the RSB configuration cascade, in the
// [rsbd] section: --socket-addr is rsbd.socket.addr, written
//
//	[rsbd]
//	socket.addr = :55555
//
// in /etc/rsb.conf, ~/.config/rsb.conf or ./rsb.conf (or the files named by
// RSB_CONFIG_FILES), or RSB_RSBD_SOCKET_ADDR in the environment; flags win
// over the environment, which wins over files. RSB's own keys keep their
// meaning: qualityofservice.reliability and .ordering set the QoS of events
// published through this daemon (default RELIABLE, UNORDERED), overridden per
// scope in a [rsbd.qos] section; transport.socket.port sets the socket port
// unless rsbd.socket.addr is set (transport.socket.host is not used for
// binding: RSB's socket servers bind every IPv4 interface, as rsbd does).
// --print-config shows the effective value of every key and its origin.
//
// # Operation
//
// Logs go to standard error through log/slog: text on a terminal, one JSON
// object per line otherwise (--log-format). /metrics, /livez and /readyz
// are served on --metrics-addr. With --gateway-http (off by default) the
// daemon serves the CloudEvents gateway (package mesh/cloudevents) on its
// own HTTP address, a participant of the bus embedded in the node; /readyz
// fails if it stops serving. --gateway-tls-cert and --gateway-tls-key serve
// it over HTTPS (--gateway-client-ca also requires client certificates),
// --gateway-token-file requires bearer tokens limited to scope prefixes;
// SIGHUP reloads the certificate, key, client CA and tokens, keeping the
// old ones when the new fail to load. --key-file seals the data plane and
// the gossip with the keys of a file of mode 600 or stricter (keys.go),
// also reloaded on SIGHUP; without it the daemon warns once at start that
// the data plane is open. Each [rsbd.gateway.webhook.NAME]
// section (keys scope, url, filter, deadletter, validate) is a webhook the
// gateway starts with; an invalid one is a configuration error. With
// --gateway-meshmessage (off by default) the daemon serves EventMesh TCP
// clients (package mesh/meshmessage) on its own TCP address, with the
// gateway's TLS and token file, and says SERVER_GOODBYE to each on
// shutdown. The daemon takes part in RSB introspection through a Bus embedded in the node: it is
// a process with a listener on /__rsb/rsbd/daemons/ that answers daemon
// surveys (package introspection) with its peers, listening scopes, the groups
// it receives and sends on, traffic by path and by scope,
// and drops; with --web-addr (off by default) it serves the introspection
// page and API (package introspection/web). SIGTERM or SIGINT stops accepting clients,
// closes them in order, lets reliable streams finish for a bounded time,
// leaves the cluster and exits 0; a second signal exits at once with 1.
// Exit code 2 means bad flags or configuration, 1 a failure to start.
package main
