// Package meshmessage owns the Apache EventMesh legacy TCP protocol on
// rsbd's side: the Package codec, byte for byte, and the "meshmessage"
// FrameAdaptor that converts an EventMeshMessage to and from an EVENT
// frame (package mesh/frame).
//
// A Package on the wire is
//
//	["EventMesh" 9 ASCII bytes]["0000" 4 ASCII bytes][length i32][headerLength i32][header JSON][body]
//
// with big-endian integers and length = 13 + headerLength + bodyLength (it
// counts neither integer field), so a Package takes length + 8 bytes. A
// Package is at most MaxPackage bytes. The header is the JSON object
// {cmd, code, desc, seq, properties} where cmd is the command's name; the
// body is raw bytes whose form depends on the command (an EventMeshMessage
// or CloudEvent in JSON for the message commands).
//
// Marshal encodes a Package, Unmarshal decodes exactly one and Read reads
// one from a stream. Decoding takes untrusted input: every length is
// checked against the bytes there are and against MaxPackage, a bad magic
// or version is ErrBadMagic or ErrBadVersion (on either the reference
// closes the connection), and no input panics.
//
// The Adaptor, registered with package mesh under "meshmessage", maps an
// EventMeshMessage ({topic, properties, headers, body}) to an EVENT frame
// as the reference does: specversion 1.0, type "eventmeshmessage", source
// "/", emorigin "meshmessage", subject the topic, then the properties and
// headers, which may overwrite those; the body is the data. Back, the
// subject is the topic, the data the body, and every attribute but the
// fixed ones a property. The topic names the RSB scope, so an
// EventMeshMessage reaches the scope through package cloudevent's mapping
// of the subject like any other protocol's event.
//
// A Server serves the protocol on a client.Bus, on listeners given to
// Serve: HELLO, HEARTBEAT, SUBSCRIBE and UNSUBSCRIBE (a Subscription body,
// each topic a scope and its sub-scopes), LISTEN, after which the events
// on the subscribed scopes reach the client as ASYNC_MESSAGE_TO_CLIENT, or
// BROADCAST_MESSAGE_TO_CLIENT for a BROADCASTING subscription;
// ASYNC_MESSAGE_TO_SERVER and BROADCAST_MESSAGE_TO_SERVER are published on
// their topic's scope and acknowledged (code 1 and the error as desc when
// refused); CLIENT_GOODBYE is answered and the connection closed, and
// Close says SERVER_GOODBYE to every client. A client silent for the
// heartbeat timeout, or sending a Package that does not decode, is
// closed. Each client has a bounded send queue: an event that finds it
// full is dropped and counted (Stats), so a slow client never holds up
// the bus. REQUEST/RESPONSE commands are not served yet.
package meshmessage
