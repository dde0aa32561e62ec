package agent

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// ErrTimeout is returned when an agent does not answer in time.
var ErrTimeout = errors.New("agent: timed out")

// ErrGone is returned when the agent's output ended (the process exited).
var ErrGone = errors.New("agent: gone")

// Client is the parent's side of an agent connection.
type Client struct {
	name string
	w    io.Writer

	mu     sync.Mutex
	nextID int64
	calls  map[int64]chan Reply
	gone   bool
	wmu    sync.Mutex
	closed chan struct{}
}

// NewClient talks to an agent that reads requests from w and writes replies
// to r. It reads r on a goroutine of its own until r ends.
func NewClient(name string, w io.Writer, r io.Reader) *Client {
	c := &Client{name: name, w: w, calls: map[int64]chan Reply{}, closed: make(chan struct{})}
	go c.readLoop(r)
	return c
}

func (c *Client) readLoop(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		var rep Reply
		if err := json.Unmarshal(sc.Bytes(), &rep); err != nil {
			continue // a stray line on the agent's stdout
		}
		c.mu.Lock()
		ch := c.calls[rep.ID]
		if rep.Kind != KindProgress {
			delete(c.calls, rep.ID)
		}
		c.mu.Unlock()
		if ch != nil {
			ch <- rep
		}
	}
	c.mu.Lock()
	c.gone = true
	for id, ch := range c.calls {
		close(ch)
		delete(c.calls, id)
	}
	c.mu.Unlock()
	close(c.closed)
}

// Call is one running operation.
type Call struct {
	c   *Client
	op  string
	ch  chan Reply
	err error
}

// Start sends an operation and returns without waiting.
func (c *Client) Start(op string, args any) *Call {
	call := &Call{c: c, op: op, ch: make(chan Reply, 64)}
	var raw json.RawMessage
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			call.err = err
			return call
		}
		raw = b
	}
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		call.err = fmt.Errorf("%s %s: %w", c.name, op, ErrGone)
		return call
	}
	c.nextID++
	id := c.nextID
	c.calls[id] = call.ch
	c.mu.Unlock()
	b, err := json.Marshal(Request{ID: id, Op: op, Args: raw})
	if err == nil {
		c.wmu.Lock()
		_, err = c.w.Write(append(b, '\n'))
		c.wmu.Unlock()
	}
	if err != nil {
		call.err = fmt.Errorf("%s %s: %w", c.name, op, err)
	}
	return call
}

// Next returns the operation's next reply: a progress reply, or its final
// one (an error reply becomes the error).
func (call *Call) Next(timeout time.Duration) (Reply, error) {
	if call.err != nil {
		return Reply{}, call.err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case rep, ok := <-call.ch:
		if !ok {
			return Reply{}, fmt.Errorf("%s %s: %w", call.c.name, call.op, ErrGone)
		}
		if rep.Kind == KindError {
			return rep, fmt.Errorf("%s %s: %s", call.c.name, call.op, rep.Err)
		}
		return rep, nil
	case <-t.C:
		return Reply{}, fmt.Errorf("%s %s after %v: %w", call.c.name, call.op, timeout, ErrTimeout)
	}
}

// WaitProgress waits for a progress reply; a final reply is an error here.
func (call *Call) WaitProgress(timeout time.Duration, out any) error {
	rep, err := call.Next(timeout)
	if err != nil {
		return err
	}
	if rep.Kind != KindProgress {
		call.err = fmt.Errorf("%s %s: finished early", call.c.name, call.op)
		return call.err
	}
	return decode(rep, out)
}

// Wait waits for the final reply, skipping progress replies, and decodes
// its data into out (if out is not nil).
func (call *Call) Wait(timeout time.Duration, out any) error {
	deadline := time.Now().Add(timeout)
	for {
		rep, err := call.Next(max(time.Until(deadline), 0))
		if err != nil {
			return err
		}
		if rep.Kind == KindDone {
			return decode(rep, out)
		}
	}
}

func decode(rep Reply, out any) error {
	if out == nil || len(rep.Data) == 0 {
		return nil
	}
	return json.Unmarshal(rep.Data, out)
}

// Do runs an operation and waits for its result.
func (c *Client) Do(op string, args any, timeout time.Duration, out any) error {
	return c.Start(op, args).Wait(timeout, out)
}

// Name returns the agent's name.
func (c *Client) Name() string { return c.name }

// Done is closed when the agent's output has ended.
func (c *Client) Done() <-chan struct{} { return c.closed }
