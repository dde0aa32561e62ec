// Package grpcbus carries gRPC calls on rsbd scopes, so that code generated
// by protoc-gen-go-grpc runs unchanged over the bus: NewClientConn returns a
// grpc.ClientConnInterface for pb.NewFooClient, and NewServer a
// grpc.ServiceRegistrar for pb.RegisterFooServer. Both are participants of
// the bus through package client (embedded in a node, or over the socket
// transport), never through node internals.
//
// The package owns the mapping of gRPC onto RSB events:
//
//   - Every endpoint (a ClientConn or a Server) has one private scope,
//     <prefix>ep/<random id>/, with one listener on it. A service lives on
//     its service address, <prefix>svc/<full service name, dots as '-'>/.
//   - A unary call is one RSB request and its reply: a REQUEST event on the
//     service address whose user infos carry "action" (the method),
//     "grpc-wire-format", "grpc-endpoint-address" (where the reply goes),
//     "grpc-call-id", "grpc-timeout" and the metadata as "__header__.<key>";
//     the data is the encoded message. The REPLY, sent to the caller's
//     private scope with the request's id as cause, carries the answer,
//     "__header__." and "__trailer__." user infos and "grpc-status"; a
//     failure is also marked with RSB's error user info and carries the
//     status message as its data. A request with user info "grpc-ack" (an
//     addition to the draft, which a ClientConn sends unless
//     Config.AckTimeout is negative) is also acknowledged at once, while
//     its handler runs: an ACK event to the caller's private scope with
//     "grpc-call-id" and the server's "grpc-endpoint-address". Such a
//     request also carries the caller's "grpc-ping-timeout".
//   - A streaming call opens with the same request/reply (the handshake),
//     which exchanges the endpoints' private scopes, each side's stream id
//     and receive window and the client's ping timeout; a server-streaming
//     call's one request message rides in the handshake. From then on both
//     sides exchange TransportFrame messages (proto/grpcbus) on each other's
//     private scope, multiplexed by stream id.
//   - Flow control counts messages: each side may send as many Message
//     frames as the peer granted, and grants more as its reader consumes.
//     The receiver chooses its grants: its window grows from the initial
//     one while its reader keeps up, up to MaxWindow messages and no more
//     than WindowBytes of messages of the recent size, so small messages
//     get more in flight and a slow reader holds a bounded number of bytes
//     as well as of messages. Writes past the window wait in a bounded buffer in order; a writer
//     that fills it blocks in SendMsg, as over HTTP/2. A WindowUpdate's
//     stream_sequence (which the draft sets on Message frames only) carries
//     the sender's cumulative grant, so a copy the bus repeats grants
//     nothing twice: it is dropped and counted. An update without it (a
//     draft-only peer) grants its delta.
//   - Liveness: a ClientConn pings each server endpoint it has streams with;
//     a stream that hears nothing from its peer (frames, pings, acks) within
//     the ping timeout fails with UNAVAILABLE, on either side. A unary call
//     no server acknowledges within the ack timeout fails with UNAVAILABLE
//     (ErrNoServer); one still waiting a ping interval after its
//     acknowledgement has its server's endpoint pinged too, and fails with
//     UNAVAILABLE (ErrServerSilent) when that endpoint answers nothing for
//     the ping timeout. A call answered within a ping interval costs no
//     ping. A server answers a stream's handshake before the handler runs,
//     so an opening nobody answers within the open timeout fails with
//     UNAVAILABLE (ErrNoServer) as well. The server holds the caller of an
//     acknowledged unary call to its pings: a caller silent for its ping
//     timeout has gone, and the handler's context is cancelled. A unary
//     call without acknowledgement has no such signal.
//
// Wire formats are "proto" (the default) and "json" (protojson for messages
// and frames). Errors returned to callers are status errors; metrics
// rsbd_grpc_* are registered on the prometheus registerer of the Config.
package grpcbus
