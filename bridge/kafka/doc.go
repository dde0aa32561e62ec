// Package kafka is the Kafka bridge (kind "kafka"), on the franz-go
// client: it registers its Factory with package bridge.
//
// The url is a comma-separated list of seed brokers (host:port); an
// address is a topic. Options: group, the consumer group of the inbound
// route (default "rsbd-<bridge name>"), and start, where a group without
// committed offsets begins (latest, the default, or earliest).
//
// Formats, as the CloudEvents Kafka binding says:
//
//   - binary (the default): each attribute in a ce_<name> header (the
//     value its canonical string), datacontenttype in the content-type
//     header, the data as the record value;
//   - structured: the event as CloudEvents JSON in the value, the
//     content-type header application/cloudevents+json;
//   - raw: the data alone, no headers;
//   - frame: the EventMeshFrame of the event as the value, no headers.
//
// Reading, a record whose content-type header is
// application/cloudevents+json is structured whatever the format, and a
// record without ce_specversion (binary) or in raw format is an
// attribute-less message: its id is <topic>-<partition>-<offset>, its
// source /kafka/<topic>, its time the record's timestamp, its record key
// the partitionkey extension. Every event read carries kafkatopic,
// kafkapartition, kafkaoffset and kafkatimestamp (RFC 3339).
//
// The record key is the partitionkey extension, else the subject (the
// scope of an RSB event): events of one scope go to one partition, where
// Kafka keeps their order. A Sender produces with acks=all and
// idempotence and returns once every record is acknowledged; a record
// larger than the producer's batch limit is rejected for good
// (bridge.ErrRejected). A Receiver consumes in a consumer group with
// auto-commit off: it commits a polled record only after the bus took it,
// so a restart (of rsbd or of the broker) gives again what was not
// committed (at-least-once).
package kafka
