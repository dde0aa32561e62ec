package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Reply kinds.
const (
	KindProgress = "progress"
	KindDone     = "done"
	KindError    = "error"
)

// OpQuit ends an agent's Serve loop.
const OpQuit = "quit"

// maxLine bounds one protocol line (results carry at most a few KiB).
const maxLine = 16 << 20

// Request is one operation sent to an agent.
type Request struct {
	ID   int64           `json:"id"`
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Reply is one answer of an agent to a Request.
type Reply struct {
	ID   int64           `json:"id"`
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data,omitempty"`
	Err  string          `json:"err,omitempty"`
}

// Progress lets an operation send intermediate replies.
type Progress func(v any)

// Op is the implementation of one operation: args are the request's
// arguments; the returned value becomes the data of the final reply.
type Op func(ctx context.Context, args json.RawMessage, progress Progress) (any, error)

// ErrUnknownOp is returned for an operation the agent does not have.
var ErrUnknownOp = errors.New("agent: unknown operation")

// Serve reads requests from in and answers on out until in ends or a quit
// request arrives; it then cancels the running operations' context and
// returns after they finished.
func Serve(ctx context.Context, in io.Reader, out io.Writer, ops map[string]Op) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wmu sync.Mutex
	enc := json.NewEncoder(out)
	send := func(r Reply) {
		wmu.Lock()
		defer wmu.Unlock()
		_ = enc.Encode(r)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		var req Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			send(Reply{Kind: KindError, Err: fmt.Sprintf("bad request: %v", err)})
			continue
		}
		if req.Op == OpQuit {
			send(Reply{ID: req.ID, Kind: KindDone})
			cancel()
			return nil
		}
		op, ok := ops[req.Op]
		if !ok {
			send(Reply{ID: req.ID, Kind: KindError, Err: fmt.Sprintf("%v: %q", ErrUnknownOp, req.Op)})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			progress := func(v any) { send(reply(req.ID, KindProgress, v, nil)) }
			v, err := op(ctx, req.Args, progress)
			send(reply(req.ID, KindDone, v, err))
		}()
	}
	return sc.Err()
}

func reply(id int64, kind string, v any, err error) Reply {
	r := Reply{ID: id, Kind: kind}
	if err != nil {
		r.Kind, r.Err = KindError, err.Error()
		return r
	}
	if v != nil {
		b, merr := json.Marshal(v)
		if merr != nil {
			r.Kind, r.Err = KindError, merr.Error()
			return r
		}
		r.Data = b
	}
	return r
}
