package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/rsbd/rsbd/mesh/streamcall"
	"github.com/rsbd/rsbd/scope"
)

// serveStream opens a streamed call to the agent on sc with the request's
// JSON as the prompt and the frame's attributes, and answers with one SSE
// event per chunk, each a whole JSON-RPC response (see the package
// documentation for how chunks become A2A events).
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request, sc scope.Scope, req *request) {
	c, err := h.caller(sc)
	if err != nil {
		h.ctr.Reject(reasonClosed)
		h.writeError(w, http.StatusServiceUnavailable, req.m.ID, errorf(CodeInternalError, "%v", err))
		return
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.ctr.Reject(reasonClosed)
		h.writeError(w, http.StatusServiceUnavailable, req.m.ID, errorf(CodeInternalError, "closed"))
		return
	}
	h.streams.Add(1)
	h.mu.Unlock()
	defer h.streams.Done()
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.StreamTimeout)
	defer cancel()
	defer context.AfterFunc(h.ctx, cancel)()
	s, err := c.Call(ctx, streamcall.Request{Prompt: req.m.Raw, Conv: req.contextID, Attrs: req.frame.Attrs})
	if err != nil {
		h.ctr.Reject(reasonAgent)
		h.writeError(w, http.StatusOK, req.m.ID, agentError(sc, err))
		return
	}
	defer s.Close()
	h.ctr.AddSubscribers(1)
	defer h.ctr.AddSubscribers(-1)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sw := &sseWriter{w: w, rc: http.NewResponseController(w), timeout: h.cfg.WriteTimeout}
	h.relay(sc, s, req, sw)
}

// relay writes the stream's chunks as SSE events until its end.
func (h *Handler) relay(sc scope.Scope, s *streamcall.Stream, req *request, sw *sseWriter) {
	ev := eventMaker{v: req.v, task: s.Session(), context: req.contextID}
	for {
		c, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return
		}
		var out []byte
		switch {
		case err != nil:
			h.ctr.AddDropped(dropStreamError, 1)
			out = appendError(nil, req.m.ID, agentError(sc, err))
		default:
			for _, result := range ev.results(c) {
				out = appendResult(out, req.m.ID, result)
				out = append(out, '\n')
			}
		}
		if !sw.send(c.Seq, out) {
			h.ctr.AddDropped(dropWrite, 1)
			return
		}
		h.ctr.AddDelivered(1)
		if err != nil || c.Done {
			return
		}
	}
}

// eventMaker turns chunks into the A2A events of a stream's responses.
type eventMaker struct {
	v             Version
	task, context string
	// agentJSON is set once the agent sent a JSON object: it speaks A2A
	// itself, and its events pass as they are.
	agentJSON bool
}

// results returns the results of the responses one chunk gives: a chunk
// holding a JSON object is one result as it is; a chunk of text becomes
// an artifact update (appended to the one before, the last chunk's marked
// lastChunk); the last chunk of a text stream is followed by a final
// status update, state completed.
func (e *eventMaker) results(c streamcall.Chunk) []json.RawMessage {
	var out []json.RawMessage
	data := bytes.TrimSpace(c.Data)
	switch {
	case len(data) > 0 && data[0] == '{' && json.Valid(data):
		e.agentJSON = true
		var b bytes.Buffer
		_ = json.Compact(&b, data)
		out = append(out, b.Bytes())
	case len(c.Data) > 0:
		out = append(out, e.artifact(c))
	}
	if c.Done && !e.agentJSON {
		out = append(out, e.final())
	}
	return out
}

// artifact returns the artifact update of a text chunk.
func (e *eventMaker) artifact(c streamcall.Chunk) json.RawMessage {
	part := map[string]any{"text": string(c.Data)}
	upd := map[string]any{"taskId": e.task, "contextId": e.context, "append": c.Seq > 0, "lastChunk": c.Done,
		"artifact": map[string]any{"artifactId": e.task, "parts": []any{part}}}
	if e.v == V10 {
		b, _ := json.Marshal(map[string]any{"artifactUpdate": upd})
		return b
	}
	part["kind"] = "text"
	upd["kind"] = "artifact-update"
	b, _ := json.Marshal(upd)
	return b
}

// final returns the status update that ends a text stream.
func (e *eventMaker) final() json.RawMessage {
	if e.v == V10 {
		b, _ := json.Marshal(map[string]any{"statusUpdate": map[string]any{"taskId": e.task, "contextId": e.context,
			"status": map[string]any{"state": "TASK_STATE_COMPLETED"}, "final": true}})
		return b
	}
	b, _ := json.Marshal(map[string]any{"kind": "status-update", "taskId": e.task, "contextId": e.context,
		"status": map[string]any{"state": "completed"}, "final": true})
	return b
}

// sseWriter writes SSE events to a client, each write bounded in time.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	buf     []byte
}

// send writes lines (JSON responses, one a line) as SSE events with id
// seq, and flushes; false when the client is gone or too slow.
func (s *sseWriter) send(seq uint32, lines []byte) bool {
	s.buf = s.buf[:0]
	for len(lines) > 0 {
		line, rest, _ := bytes.Cut(lines, []byte{'\n'})
		lines = rest
		if len(line) == 0 {
			continue
		}
		s.buf = append(s.buf, "id: "...)
		s.buf = strconv.AppendUint(s.buf, uint64(seq), 10)
		s.buf = append(s.buf, "\ndata: "...)
		s.buf = append(append(s.buf, line...), "\n\n"...)
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	if _, err := s.w.Write(s.buf); err != nil {
		return false
	}
	return s.rc.Flush() == nil
}
