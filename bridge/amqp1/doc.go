// Package amqp1 is the AMQP 1.0 broker of the bridges (kind "amqp",
// through github.com/Azure/go-amqp) in the Artemis/JMS flavour of the
// CloudEvents AMQP binding: every attribute is an application property
// cloudEvents_<name>, cloudEvents_datacontenttype included, so JMS
// clients and selectors read them; datacontenttype is the content-type
// property too; the data is one data section, what a JMS bytes message
// carries; the partitionkey extension is also the message's group id (JMS
// message groups). Properties written cloudEvents:<name> are read too. A
// message whose content type is application/cloudevents+json is read as a
// structured event; the bridge also writes structured, raw and frame
// messages. Messages are durable and carry the event id as message id.
//
// Messages without attributes are read as bridge.Fallback's event: the id
// is the message id (a string, number, UUID or binary in hex), or
// "<address>-<n>" without one (n counting the receiver's messages from its
// start time in microseconds); the source /amqp/<address>; the time the
// creation time, else when the message arrived. Every event read carries
// amqpaddress.
//
// Addresses are the broker's: an Artemis address, or on RabbitMQ's AMQP
// 1.0 plugin /queue/NAME (which the plugin declares, not durable, when a
// link attaches), /amq/queue/NAME (a queue that exists, durable or not)
// and /exchange/NAME/KEY to send. A queue the plugin declares for
// /queue/NAME does not survive a restart of RabbitMQ: to keep messages
// across one, declare the queue durable (rabbitmqadmin, an AMQP 0.9.1
// client, a policy) and name it /amq/queue/NAME; the bridge's messages are
// durable. A dead-letter address of this kind starts with "/", so the
// bridge's dead-letter value spells it broker:/queue/NAME. The tests run
// against RabbitMQ's plugin; no Artemis broker runs on the test machines.
//
// # Delivery
//
// A sender sends unsettled transfers and returns from Send only once the
// broker accepted every message; any other outcome (rejected, released,
// modified), a timeout or a lost connection fails the Send, and the next
// one connects again. A receiver
// reads its address over one link (messages in order) with a credit of
// Config.Credit, accepts each message only after the bus took it, and
// closes its connection when Receive ends, so the broker gives the
// unaccepted messages again. It grants credit itself, a window at a time
// and only once the broker sent the whole window (window in credit.go):
// RabbitMQ's AMQP 1.0 plugin overshoots credit that is topped up while it
// sends, and go-amqp's automatic credit then waits for ever.
//
// Each sender and receiver owns one connection and its session; the
// client library's goroutines read them. Close is idempotent.
package amqp1
