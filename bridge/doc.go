// Package bridge owns the broker bridges' framework: the broker-neutral
// interfaces a broker package implements, the registry of broker kinds,
// the message formats, the conversions every broker shares, the cycle
// marker, the dead-letter reasons, the rsbd_bridge_* metric families and
// the runner that moves events between the bus and a broker.
//
// # Brokers
//
// A broker package (bridge/kafka, bridge/nats, bridge/redis, ...)
// registers a Factory for its kind in init with Register. A Factory takes
// the Settings of one [bridge.NAME] section and returns a Broker: one
// connection to the broker (or a pool of them) that makes Senders and
// Receivers for broker addresses (a topic, a subject, a stream, a queue,
// an exchange and routing key; each broker says how it spells them).
//
//   - A Sender is the outbound side, bus → broker: Send publishes a batch
//     of CloudEvents in order and returns only once the broker acknowledged
//     every one of them (Kafka acks=all, NATS flush, Redis command replies),
//     so the runner knows what it may forget (at-least-once). A failed Send
//     is retried whole: the broker may see a message twice, never none.
//   - A Receiver is the inbound side, broker → bus: Receive reads until its
//     context ends or the connection fails, converts each message into a
//     Message and calls the Deliver callback, which returns only once the
//     bus accepted the event; only then does the Receiver acknowledge or
//     commit the message. A message that does not convert is handed to
//     Deliver too, as a Message with a Reason and no Event: the runner
//     sends it to the dead-letter destination (or drops and counts it), and
//     the Receiver acknowledges it like any other, so it never stalls the
//     bridge.
//
// # Formats
//
// Format says how an event is written into a message. FormatBinary puts
// the attributes in the broker's own headers or properties (each broker
// package implements its binding; BinaryAttrs and FromBinary do the
// prefix work) and the data in the value; FormatStructured writes the whole
// event as CloudEvents JSON; FormatRaw writes the data alone and reads a
// message as an attribute-less one; FormatFrame writes the EventMeshFrame
// encoding (package mesh/frame) of the event, and reads a frame back, or,
// when the value is no frame, CloudEvents JSON, as EventMesh's storage
// plugins do, so an EventMesh runtime and rsbd share a topic. EncodeValue
// and DecodeValue implement the three broker-neutral formats.
//
// # Messages without attributes
//
// A message that carries no CloudEvents attributes (a plain producer, or
// FormatRaw) is read as the event Fallback builds: its id is the broker's
// position of the message (<topic>-<partition>-<offset> on Kafka,
// <stream>-<entry id> on Redis streams, the message id elsewhere), its
// source /<kind>/<topic>, its type FallbackType, its time the broker's,
// its datacontenttype the message's when it says one, else guessed from
// the payload (GuessContentType: JSON, text or bytes). Every event read
// carries what the broker says of the message as extensions named after
// the kind (kafkatopic, kafkaoffset, natssubject, redisstream, ...),
// which SetBrokerExt sets.
//
// # On the bus
//
// ToBus turns an inbound event into the RSB event the runner publishes on
// the route's scope: package cloudevent's mapping keeps the CloudEvents
// attributes as "ce:" user infos (which `rsb logger` shows), the event's
// own subject, when it has one, as the user info SubjectKey, and the
// bridge's name as the user info MarkerKey: the cycle marker. FromBus does
// the reverse for the outbound side: an event whose marker names the same
// bridge is not forwarded back (ErrCycle); the markers are removed, the
// subject given back, and an event that came from a CloudEvent loses the
// rsb… extensions of its RSB metadata, so a bridge out reproduces the
// event a bridge brought in unchanged (id, source, type, time, subject,
// datacontenttype, dataschema, extensions, data).
//
// # The runner
//
// A Bridge (New, Start, Close) runs one [bridge.NAME] section on a
// client.Bus: the outbound route reads events of a scope and its
// sub-scopes from a bounded Reader (the bus never waits: when the broker
// falls behind, the queue fills and what does not fit is dropped and
// counted, reason queue_full) and sends them in batches, one batch in
// flight, retrying a failed batch with doubling back-off until the broker
// takes it; the inbound route publishes what a Receiver delivers on the
// route's scope, one message at a time, so events keep their broker order
// and the broker holds what the bus has not yet taken (back-pressure),
// and starts the Receiver again with back-off when it ends. An idle
// outbound route probes its broker (Prober) every ProbeEvery, so
// readiness tells a broker that went away before the next event does. Events of
// one scope therefore cross a bridge in the order they were published, in
// both directions. Dead letters go to a scope (a DeadLetter starting with
// "/") or to a broker address (one that does not start with "/", or any
// address after DeadLetterBrokerPrefix), carrying the reason as the extension
// ExtDeadLetterReason; without a DeadLetter they are dropped, counted and
// logged.
//
// # Metrics
//
// NewMetrics registers the families every bridge shares, labelled by
// bridge name and direction ("in": broker → bus, "out": bus → broker):
// rsbd_bridge_up (1 while the route works, 0 while it fails),
// rsbd_bridge_messages_total (events moved), rsbd_bridge_drops_total
// and rsbd_bridge_dead_letters_total (by reason),
// rsbd_bridge_retries_total (failed sends retried) and
// rsbd_bridge_reconnects_total (receivers and senders started again).
package bridge
