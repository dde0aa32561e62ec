// Package mqtt is the MQTT broker of the bridges (kind "mqtt"): MQTT 5
// through autopaho (github.com/eclipse/paho.golang) and MQTT 3.1.1
// through github.com/eclipse/paho.mqtt.golang, each with the CloudEvents
// MQTT binding.
//
//   - MQTT 5, binary mode (the default): datacontenttype is the PUBLISH
//     Content Type property, every other attribute a user property named
//     as the attribute, without prefix; the data is the payload. A message
//     whose Content Type is application/cloudevents+json is read as a
//     structured event.
//   - MQTT 3.1.1 has no properties: structured mode only, the whole event
//     as CloudEvents JSON in the payload.
//   - Both also write raw (the data alone) and frame (the EventMeshFrame
//     of the event); MQTT 5 says the format's content type.
//
// Messages without attributes (a plain producer such as mosquitto_pub)
// are read as bridge.Fallback's event: MQTT has no message id, so the id
// is "<topic>-<n>", n numbering the messages a receiver read, counted from
// its start time in microseconds; the source is /mqtt/<topic> (each level
// percent-encoded), the time when the message arrived. In structured mode a
// payload counts as a CloudEvent when it is a JSON object naming
// "specversion"; such a payload that does not decode is a dead letter.
// Every event read carries the extensions mqtttopic and mqttqos, and
// mqttretained ("true") when it came from a retained message.
//
// # Delivery
//
// A bridge section's options (Config): protocol (5 or 3.1.1), qos (0, 1
// or 2; 1 by default), retain (pass retained messages both ways) and
// clientid (the prefix of the client ids). Each sender and receiver owns
// one connection, which its client library connects again with backoff.
// A sender publishes at the bridge's QoS and returns only once the broker
// acknowledged every message (PUBACK, or PUBCOMP at QoS 2). A receiver
// subscribes at the bridge's QoS with a persistent session (clean start
// false, a session expiry of an hour), acknowledges a message only after
// the bus took it (manual acknowledgement, in order), and holds at most
// inboxSize messages (the MQTT 5 Receive Maximum): while the bus is slow
// the client stops reading, and the broker keeps the rest. Receive
// returns ErrDisconnected when the connection drops; the broker gives the
// unacknowledged messages again on the next one.
//
// Goroutines: the client libraries' own (reading, writing, reconnecting);
// their message callbacks only queue the message for Receive, which runs
// on the runner's goroutine. Close ends them and is idempotent.
package mqtt
