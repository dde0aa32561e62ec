// Package a2a is the mesh gateway's A2A listener: agents on the bus are
// reached by A2A clients over JSON-RPC 2.0 and HTTP, in the method names of
// A2A 0.3 (message/send, message/stream, tasks/get, …) and of A2A 1.0
// (SendMessage, SendStreamingMessage, GetTask, …); the A2A-Version header
// chooses (none, or 0.3: the 0.3 names; 1.0: the 1.0 names; another:
// error -32009).
//
// The package registers the "a2a" FrameAdaptor with package mesh: a
// JSON-RPC message becomes an EVENT frame whose data is the message
// verbatim and whose attributes describe it (specversion, id, source
// eventmesh-a2a, protocol a2a, ema2aversion, a2amethod and the type
// org.apache.eventmesh.a2a.<method>.req for a request,
// org.apache.eventmesh.a2a.common.response for a response, and subject,
// seq and targetagent from the params' _topic, _seq and _agentId); back,
// the frame's data is the message. Decode is the untrusted-input decoder
// underneath, fuzzed.
//
// A Handler serves, on a client.Bus:
//
//   - POST <Prefix><scope> (Prefix is /.a2a): a JSON-RPC request to the
//     agent on that scope (Config.DefaultAgent's for Prefix alone). An
//     operation answered at once (message/send, tasks/get, …) is an RSB
//     call: method the operation's 1.0 name (SendMessage, GetTask, …) on
//     the agent's LocalServer, argument the request's JSON as bytes; the
//     agent answers with the JSON of the result, which becomes the
//     response's result. An agent's error reply is error -32603 with its
//     message, no reply within Config.CallTimeout is -32603 too, and an
//     answer that is not JSON is -32006.
//   - A streamed operation (message/stream, tasks/resubscribe and their
//     1.0 names) is a streamed call (package mesh/streamcall) to the
//     agent's scope: the prompt is the request's JSON, the attributes the
//     frame's, conv the message's contextId. The answer is Server-Sent
//     Events, one a chunk (the SSE id is its seq), each a whole JSON-RPC
//     response. A chunk holding a JSON object is the result as it is (the
//     agent speaks A2A and marks its final event itself); a chunk of text
//     becomes an artifact update (append after the first, lastChunk on the
//     last), and the last chunk of such a stream is followed by a status
//     update with state completed and final true. A stream that fails
//     (the agent's error, a lost chunk, no first chunk within
//     Config.CallTimeout, the deadline) ends with an error response. A client that goes away cancels the call at the agent.
//   - GET /.well-known/agent-card.json (and the older
//     /.well-known/agent.json), and <Prefix><scope>/.well-known/agent-card.json
//     for one agent: the agent card, Config.Card or one built from the
//     configuration naming this endpoint.
//
// Bad input gets the error JSON-RPC defines: -32700 for bytes that are
// not JSON, -32600 for JSON that is not a request (a batch, a response, no
// id, a wrong jsonrpc member), -32601 for a method the version does not
// have (a name of the other version says so), -32602 for params that are
// not an object or a message without parts; a body over MaxMessageBytes
// gets 413. Each refusal is counted by reason (Counters, protocol "a2a")
// and touches nothing else. With tokens (Config.Tokens) a request needs a
// bearer token that may publish on the agent's scope (401, 403).
//
// Goroutines: none of its own; each request is served on its HTTP
// goroutine, a stream until it ends. Close ends the streams and waits.
package a2a
