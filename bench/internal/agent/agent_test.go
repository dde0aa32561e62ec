package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// pipeAgent runs Serve on in-memory pipes and returns the client side.
func pipeAgent(t *testing.T, ops map[string]Op) (*Client, chan error) {
	t.Helper()
	reqR, reqW := io.Pipe()
	repR, repW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Serve(context.Background(), reqR, repW, ops)
		repW.Close()
		done <- err
	}()
	t.Cleanup(func() { reqW.Close() })
	return NewClient("test", reqW, repR), done
}

func TestProgressAndResult(t *testing.T) {
	gate := make(chan struct{})
	ops := map[string]Op{
		"count": func(ctx context.Context, args json.RawMessage, progress Progress) (any, error) {
			var a struct{ N int }
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, err
			}
			progress("armed")
			<-gate
			return map[string]int{"n": a.N * 2}, nil
		},
		"fail": func(context.Context, json.RawMessage, Progress) (any, error) {
			return nil, errors.New("boom")
		},
	}
	c, done := pipeAgent(t, ops)
	call := c.Start("count", map[string]int{"N": 21})
	var armed string
	if err := call.WaitProgress(5*time.Second, &armed); err != nil || armed != "armed" {
		t.Fatalf("progress = %q, %v", armed, err)
	}
	// A second operation runs while the first is blocked.
	if err := c.Do("fail", nil, 5*time.Second, nil); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("fail op returned %v", err)
	}
	if err := c.Do("nosuch", nil, 5*time.Second, nil); err == nil || !strings.Contains(err.Error(), "unknown operation") {
		t.Fatalf("unknown op returned %v", err)
	}
	close(gate)
	var res map[string]int
	if err := call.Wait(5*time.Second, &res); err != nil || res["n"] != 42 {
		t.Fatalf("result = %v, %v", res, err)
	}
	if err := c.Do(OpQuit, nil, 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after quit")
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("client did not see the end of the agent's output")
	}
	if err := c.Do("count", nil, time.Second, nil); !errors.Is(err, ErrGone) {
		t.Fatalf("call after quit returned %v, want ErrGone", err)
	}
}

func TestTimeout(t *testing.T) {
	ops := map[string]Op{
		"block": func(ctx context.Context, _ json.RawMessage, _ Progress) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	c, _ := pipeAgent(t, ops)
	err := c.Do("block", nil, 20*time.Millisecond, nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if err := c.Do(OpQuit, nil, 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
}
