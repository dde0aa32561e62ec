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
// Serve (a tls.Listener for TLS): HELLO, HEARTBEAT, SUBSCRIBE and
// UNSUBSCRIBE (a Subscription body, each topic a scope and its
// sub-scopes), LISTEN, after which the events on the subscribed scopes
// reach the client as ASYNC_MESSAGE_TO_CLIENT, or
// BROADCAST_MESSAGE_TO_CLIENT for a BROADCASTING subscription;
// ASYNC_MESSAGE_TO_SERVER and BROADCAST_MESSAGE_TO_SERVER are published on
// their topic's scope and acknowledged; CLIENT_GOODBYE is answered after
// everything queued before it and the connection closed, and Close says
// SERVER_GOODBYE to every client ahead of its queue.
//
// Requests are RSB calls. A topic names a method: /robot/arm/move/ is the
// method move of the RSB server on /robot/arm/. REQUEST_TO_SERVER calls it
// (client.RemoteServer) with the message's body as a string argument, and
// the reply comes back as RESPONSE_TO_CLIENT with the request's seq, its
// topic the method's scope and its body the reply's data. A SUBSCRIBE item
// of type SYNC makes the client the server of its topic's method
// (client.LocalServer): each call reaches it as REQUEST_TO_CLIENT, with a
// fresh seq that the message's emcorrelationid property repeats, and its
// RESPONSE_TO_SERVER (matched by seq, or by emcorrelationid) is the
// reply, its body a string. A request waits at most the message's ttl
// property (EventMesh clients set it, in milliseconds; else emttl) or
// Config.RequestTimeout, capped at MaxRequestTimeout; each client has at
// most MaxRequests requests in flight each way.
//
// Every response carries the reference's result code: 0 success, 1 a
// failure with desc saying why (a body that is not the command's JSON, a
// topic that is no scope, an error reply, no answer in time), 2 a token's
// refusal, 3 a bound reached. With Config.Tokens, HELLO's UserAgent must
// carry a known token, in its token field or, for clients without one, in
// password; a HELLO without one, or any command but HEARTBEAT before
// HELLO, gets code 2 and the connection is closed, as the reference closes
// a session whose HELLO fails. The token's scope prefixes (mesh.Token)
// bound what the client may publish, request, subscribe to and serve.
//
// Bad input closes only its own connection, without a reply, as the
// reference's decoder does: a bad magic or version, a Package over
// MaxPackage, lengths that contradict each other, a header that is not
// JSON or has no command, or a connection that ends inside a Package. A
// client silent for the heartbeat timeout is closed, and so is one that
// takes longer than WriteTimeout to take a write (a slow consumer). Each
// client has a bounded send queue: an event that finds it full is dropped
// and counted, so a slow client never holds up the bus. Every drop,
// refusal and close is counted by reason in the Server's mesh.Counters,
// the daemon's rsbd_gateway_* metrics with protocol="meshmessage".
package meshmessage
