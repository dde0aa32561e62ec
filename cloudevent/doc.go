// Package cloudevent owns the one mapping between RSB events and
// CloudEvents 1.0, and the CloudEvents JSON format (structured and batch).
// Every protocol adaptor of the mesh gateway and every broker bridge
// converts through it, so an RSB event looks the same on every protocol.
//
// An Event holds a CloudEvent's context attributes in their canonical
// string form (specversion is always "1.0" and implied) and its data.
// Validate checks it against the CloudEvents rules: the required
// attributes, attribute names (lowercase a–z and 0–9, at most 20
// characters, ValidName), string values (valid UTF-8 without control
// characters, noncharacters or surrogates), the time in RFC 3339, and the
// package's limits (params.go).
//
// # RSB events as CloudEvents
//
// FromRSB turns a notification.Event into an Event and ToRSB turns it back;
// the round trip keeps everything RSB carries (notification.Event.Equal
// holds), including which optional fields were on the wire although empty.
// The mapping:
//
//   - subject is the scope;
//   - id is the RSB event id's UUID, source is "urn:uuid:<sender id>" and
//     type is DefaultType, unless the event carries user infos "ce:id",
//     "ce:source" or "ce:type" (an event that came from a CloudEvent), which
//     take their place; "ce:dataschema" and "ce:<name>" likewise give
//     dataschema and other extensions back;
//   - time is the create time (RFC 3339, microseconds);
//   - datacontenttype comes from the wire schema (ContentType): utf-8-string
//     is "text/plain; charset=utf-8", ascii-string "text/plain;
//     charset=us-ascii", bytes "application/octet-stream", a protobuf schema
//     ".pkg.Msg" "application/x-protobuf; messagetype=.pkg.Msg", a wire
//     schema that is a media type itself, and every other
//     schema "application/vnd.rsb; wireschema=<schema>";
//   - the RSB metadata are extensions, all of CloudEvents type String:
//     rsbsender (sender UUID), rsbseq (sequence number), rsbmethod,
//     rsbwireschema (only when datacontenttype does not give the wire schema
//     back), rsbcauses (cause ids "<uuid>:<seq>", space separated),
//     rsbcreatetime (only when time cannot hold the create time),
//     rsbsendtime, rsbreceivetime, rsbdelivertime (microseconds since the
//     epoch), rsbuserinfos and rsbusertimes (JSON arrays of [key, value]
//     pairs in wire order), and rsbempty (the optional fields present on the
//     wire although empty: method, wireschema, data, metadata, receivetime,
//     delivertime).
//
// ToRSB accepts any valid CloudEvent that has a subject: attributes without
// an RSB counterpart (id, source, type, dataschema and extensions not named
// rsb…) become "ce:<name>" user infos, so RSB tools show them and FromRSB
// gives them back. An Event without rsbsender gets a zero event id, which
// the publishing informer assigns.
//
// # JSON format
//
// Marshal, Unmarshal, MarshalBatch and UnmarshalBatch implement the JSON
// event format (media types MediaType and BatchMediaType). Data whose
// content type is JSON (absent, */json or */*+json) and that is a JSON value
// is written as the value of "data"; text (text/*) that is valid UTF-8 as a
// JSON string in "data"; everything else base64-encoded in "data_base64".
// Decoding accepts exactly one JSON object (or array, for a batch), rejects
// duplicate members, non-string context attributes, extension values other
// than strings, booleans and 32-bit integers, both data members at once and
// input past the limits; every refusal wraps one of the package's sentinel
// errors. Decoders take untrusted input: they check every length and never
// panic.
package cloudevent
