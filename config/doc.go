// Package config implements the RSB configuration cascade for rsbd: a flat tree of
// dot-separated keys with string values, typed on lookup, where every value remembers
// where it came from.
//
// # Sources
//
// [Load] merges these sources, later ones winning (RSB specification, configuration):
//
//  1. built-in defaults registered by the caller ([LoadOptions].Defaults);
//  2. the configuration files, by default %system (/etc/rsb.conf), %prefix
//     ($prefix/etc/rsb.conf, skipped when no prefix is configured), %user
//     (~/.config/rsb.conf) and %pwd (./rsb.conf); RSB_CONFIG_FILES, a ':'-separated list
//     that may use those four placeholders and plain paths, replaces that list;
//  3. environment variables RSB_*: strip RSB_, lowercase, '_' becomes '.', so
//     RSB_TRANSPORT_SOCKET_PORT sets transport.socket.port; empty values are ignored with
//     a warning (RSB rejects them); RSB_CONFIG_FILES and RSB_CONFIG_DEBUG only steer the
//     loader and are not entered into the tree;
//  4. programmatic overrides and command-line flags ([Config.Set], [Config.SetFlags]).
//
// When RSB_CONFIG_DEBUG is set (to any value) the loader writes a trace of every step to
// [LoadOptions].Debug.
//
// # File syntax
//
// Files use the INI dialect RSB reads: "[section.sub]" headers, "key = value" options
// (the key becomes "section.sub.key"), full-line comments starting with '#' or ';', blank
// lines and surrounding whitespace ignored. As in RSB, everything from the first '#' in a
// value on is a comment. A value that starts with '"' is a quoted string in Go's syntax
// instead, which holds '#' and keeps its spaces, so an MQTT filter or a RabbitMQ binding
// key is written filter = "sensors/#"; only a comment may follow the closing quote, and
// --print-config quotes the values that need it the same way. An option before the first section
// header is a syntax error, as it is for RSB. Files are bounded in size ([MaxFileSize])
// and parse errors name the file and line ([ErrSyntax]).
//
// # Key spelling
//
// Keys are case-insensitive and '-' and '_' are the same as '.': every key is stored in
// its canonical form, lowercase with '.' separators. This is what makes one key reachable
// from every source: the environment can only spell '.' (as '_'), flags conventionally
// spell it '-', so "rsbd.socket-addr" in a file, RSB_RSBD_SOCKET_ADDR and the flag
// --socket-addr ([FlagKey]) all name rsbd.socket.addr. Prefer the dotted spelling in
// files. The one exception is a key part starting with '/': it is an RSB scope and is
// kept verbatim (scopes are case-sensitive and may contain '-' and '_'), as used by the
// per-scope QoS entries of the rsbd.qos section.
//
// # rsbd keys
//
// rsbd's own settings live under "rsbd." (see the Key constants); RSB's keys
// (qualityofservice.*, transport.*, introspection.*) keep their RSB meaning.
// [Config.QoS] reads qualityofservice.reliability and qualityofservice.ordering;
// [Config.ScopeQoS] reads per-scope overrides written as
//
//	[rsbd.qos]
//	/robot/arm/ = RELIABLE,ORDERED
//	/camera/    = UNRELIABLE
//
// A dimension left out inherits the global QoS. Scope entries can only be given in files
// or through [Config.Set]: the environment cannot spell a scope.
//
// # Provenance
//
// Every [Value] carries its [Origin] (file and line, environment variable, flag, default)
// and the origins it replaced; [Config.Dump] prints the effective tree with them and backs
// the daemon's --print-config flag. Typed getters return errors that wrap [ErrBadValue]
// and name the key, the value and its origin.
package config
