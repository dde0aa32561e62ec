// Package notification owns rsbd's Go view of an RSB event and its wire form.
//
// It provides:
//
//   - Event, the in-memory event (scope, method, wire schema, serialized
//     payload, id, causes, meta data) with presence flags so that decoding and
//     re-encoding a Notification gives the same bytes;
//   - EventID and the RSB event-id UUID (UUIDv5 of the sender id and the
//     8-digit hex sequence number), plus UUID parsing and formatting;
//   - lossless conversion between Event and the generated
//     rsb.protocol.Notification (ToNotification, FromNotification);
//   - a hand-written protobuf codec for Notification (AppendNotification,
//     DecodeNotification, Marshal, Unmarshal) that produces the same bytes as
//     the generated code with deterministic marshalling, in field-number
//     order (event_id, field 108, last) as the RSB Python and C++ clients do;
//   - converters between Go values and payload bytes for every RSB wire
//     schema (void, bool, integers, floats, strings, bytes, scope and protobuf
//     messages), collected in a Registry.
//
// Everything decoded here may come from the network: decoders check every
// length, never panic and return errors wrapping the exported sentinels.
// Fragmentation of Notifications is not handled here (see package
// fragmentation); the socket framing lives in package rsbsocket.
package notification
