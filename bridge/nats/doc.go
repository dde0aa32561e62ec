// Package nats is the NATS bridge (kind "nats"), on the nats.go client:
// it registers its Factory with package bridge.
//
// The url is a NATS URL (nats://host:port, several separated by commas);
// an address is a subject. Options: jetstream (false by default) carries
// the events through JetStream, with acknowledgements both ways; durable
// names the inbound route's durable consumer (default "rsbd-<bridge
// name>").
//
// Formats: binary (the default), each attribute in a ce-<name> header and
// datacontenttype in the content-type header, the data as the payload;
// structured, the event as CloudEvents JSON with content-type
// application/cloudevents+json; raw, the data alone, no headers; frame,
// the EventMeshFrame of the event. A message whose content-type is
// application/cloudevents+json is read as structured whatever the format;
// a message without ce-specversion (binary) or in raw format is an
// attribute-less one, whose id is <stream>-<stream sequence> in JetStream
// and a fresh unique id on core NATS (which numbers no message), source
// /nats/<subject>, time the stream's timestamp (JetStream) or the time it
// arrived. Every event read carries natssubject, and in JetStream
// natsstream and natssequence.
//
// Delivery: on core NATS a Send publishes and flushes, so it returns once
// the server has the messages, but core NATS acknowledges nothing further
// and a Receiver's subscription loses what arrives while it is away (at
// most once inbound); with jetstream a Send returns once the stream
// stored every message (its publish acknowledgement) and a Receiver, a
// durable pull consumer with explicit acknowledgement, acknowledges a
// message only after the bus took it (at least once both ways). The stream
// of a subject, RSBD_<subject with '.', '*' and '>' as '_'>, is created
// on first use (file storage) unless it exists.
package nats
