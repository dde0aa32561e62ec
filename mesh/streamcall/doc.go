// Package streamcall carries streamed calls over the bus: a caller sends a
// prompt, a server answers with a sequence of chunks (the tokens of a model,
// the updates of an agent), each an EventMeshFrame (package mesh/frame)
// carried as the bytes payload of an RSB event.
//
// A call opens with a STREAM_REQ frame published on <scope>/call/: its
// attributes are sid (the session id the caller picked), replyTo (the scope
// the chunks go to), model and conv when given, timeout (the call's
// remaining time in milliseconds) and any extra attributes of the Request;
// its data is the prompt. The server answers with STREAM_CHUNK frames on
// replyTo: seq numbers them from 0 within the session, sid names it,
// etype, err (which sets the hasError flag) and meta (a JSON string, which
// sets hasMeta) are optional; the last chunk carries the done flag. A
// handler's error becomes the err attribute of that last chunk. A caller
// that gives up sends a STREAM_CHUNK with sid, the done flag and err
// "cancelled" on <scope>/call/; the server then cancels the handler's
// context, as it does when the request's timeout passes.
//
// Serve runs a Handler for each call on a scope: the Handler writes chunks
// with its Writer and sees its context cancelled when the caller cancels or
// the call's deadline passes. A Caller (NewCaller; Call for one call) opens
// calls and returns a Stream whose Recv hands the chunks over in sequence
// order. The chunks are checked by a Receiver, a pure state machine (no
// goroutines, no clock; the time is an argument): chunks that arrive out of
// order are held (at most MaxHeld) until the gap before them fills, a gap
// still open after GapTimeout is a lost chunk (ErrLost), a chunk for a
// place already passed is out of order (ErrOutOfOrder), no chunk within
// the first chunk's timeout means no server took the call (ErrNoAnswer),
// and the call's deadline ends the call (ErrDeadline). Each is an error
// Recv returns, never a hang.
//
// HTTPHandler serves streamed calls to HTTP clients: a POST to <prefix><scope>
// opens a call with the body as the prompt and answers with Server-Sent
// Events, one per chunk (its seq as the SSE id, its text on data lines), the
// last of type "done", or "error" with the error's text.
//
// Goroutines: a Server runs one goroutine per call (the Handler), ended by
// the handler's return; Server.Close cancels them and waits. A Caller's
// listener delivers inline into each call's bounded queue; a Stream's
// owner reads it. Close of both is idempotent.
package streamcall
