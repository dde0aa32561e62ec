// Package amqp091 is the RabbitMQ broker of the bridges (kind
// "rabbitmq", AMQP 0.9.1 through github.com/rabbitmq/amqp091-go) with the
// CloudEvents AMQP binding in binary mode: every attribute but
// datacontenttype is an application header cloudEvents:<name> (headers
// written cloudEvents_<name> are read too), datacontenttype is the
// content-type property, the data is the body. A message whose content
// type is application/cloudevents+json is read as a structured event;
// the bridge also writes structured, raw and frame messages. Messages are
// persistent and carry the event id as their message id.
//
// Addresses: outbound "EXCHANGE/ROUTING_KEY", or a queue name, published
// to through the default exchange; inbound a queue name. Unless the
// option declare is "false", the bridge declares the queues it names
// (durable) and binds the inbound queue as the option bind
// ("EXCHANGE/BINDING_KEY") says. An exchange without a bound queue
// drops what is published to it: RabbitMQ's rule, which a bridge to an
// exchange leaves to the broker's configuration (bindings or an
// alternate exchange).
//
// Messages without attributes (a plain producer) are read as
// bridge.Fallback's event: the id is the message id, or "<queue>-<n>"
// when the message has none (n counting the receiver's messages from its
// start time in microseconds); the source /rabbitmq/<queue>; the time the
// timestamp property, else when the message arrived. Every event read
// carries rabbitmqroutingkey and rabbitmqredelivered.
//
// # Delivery
//
// A sender puts its channel in confirm mode and returns from Send only
// once the broker confirmed every message of the batch; a nack, a timeout
// or a lost connection fails the Send, and the next one connects again.
// A receiver is the queue's one exclusive consumer, so messages reach the
// bus in queue order; it holds at most the prefetch count of
// unacknowledged messages and acknowledges each only after the bus took
// it. When Receive ends it closes its connection, and the broker puts
// the unacknowledged messages back in their place.
//
// Each sender and receiver owns one connection and its one channel; the
// client library's goroutines read them. Close is idempotent.
package amqp091
