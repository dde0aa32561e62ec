// Package pulsar is the Apache Pulsar broker of the bridges (kind
// "pulsar", through github.com/apache/pulsar-client-go) with the binding
// of the seed's table: every attribute but datacontenttype is a property
// ce_<name>, datacontenttype the property content-type, the data the
// payload, and the partitionkey extension the message key (Key_Shared and
// partitioned topics keep a key's order). A message whose content-type is
// application/cloudevents+json is read as a structured event; the bridge
// also writes structured, raw and frame messages.
//
// Messages without attributes are read as bridge.Fallback's event: the
// id is the Pulsar message id (ledger:entry:partition:batch), the source
// /pulsar/<tenant>/<namespace>/<topic>, the time the publish time. Every
// event read carries pulsartopic and pulsarmessageid.
//
// A sender is a producer whose Send returns once the broker stored each
// message; a receiver is the exclusive consumer of the bridge's
// subscription (option subscription, "rsbd-<bridge name>" by default), so
// messages reach the bus in order, acknowledged one by one after the bus
// took them.
//
// No Pulsar broker runs on the test machines: the mapping is unit-tested
// and fuzzed, the client code is compiled, and the bridge is untested
// against a broker.
package pulsar
