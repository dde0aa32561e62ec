// Package redis is the Redis bridge (kind "redis"), on the go-redis
// client: it registers its Factory with package bridge.
//
// The url is a Redis URL (redis://[user:password@]host:port[/db]); an
// address is a stream, or a channel with the option mode=pubsub.
// Options: mode, stream (the default) or pubsub; group, the consumer
// group of an inbound stream (default "rsbd-<bridge name>"); start, where
// a new group begins: latest (the default, "$") or earliest ("0").
//
// Streams. Formats: binary (the default), an entry with each attribute in
// a ce_<name> field, datacontenttype in the content-type field and the
// data in the data field; structured, the event as CloudEvents JSON in the
// data field with content-type application/cloudevents+json; raw, the data
// field alone; frame, the EventMeshFrame of the event in the data field.
// A Sender adds the batch's entries in one pipeline and returns once
// Redis answered every XADD. A Receiver reads in a consumer group
// (XREADGROUP) and acknowledges (XACK) an entry only after the bus took
// it; a new Receiver first reads again the entries its consumer was given
// and never acknowledged, so nothing is lost to a restart of rsbd or of
// Redis (given Redis's own persistence). An attribute-less entry's id is
// <stream>-<entry id>, its time the entry id's milliseconds, its data the data
// field, or, for an entry of other fields alone, those fields as a JSON
// object. Events read
// carry redisstream, redisid and redisredelivered (true for an entry read
// again).
//
// Pub/sub. Formats: structured (the default: no message headers exist, so
// the whole event is JSON), raw and frame. A Sender's PUBLISH returns once
// Redis delivered the message to the subscribers it has; a Receiver's
// subscription loses what is published while it is away (at most once).
// An attribute-less message's id is a fresh unique id, its time the time
// it arrived. Events read carry redischannel.
package redis
