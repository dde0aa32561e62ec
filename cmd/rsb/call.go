package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/scope"
)

const callUsage = `usage: rsb call [OPTIONS] 'URI/method(ARG)'

Call a method of the RSB server at URI and print its result. ARG is an event
spec as for rsb send ('' inside the parentheses, i.e. "()", for none).
A remote error is printed to stderr and exits with 1; no reply in time exits
with 3.

Options:
  --timeout D, -t D   how long to wait for the reply (default 10s)
  --no-wait           send the request and exit without waiting
` + idlUsage

// callOptions is the parsed command line of call.
type callOptions struct {
	spec    callSpec
	timeout time.Duration
	noWait  bool
	idl     idlFlags
}

func parseCall(args []string, def client.URI) (callOptions, error) {
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	o := callOptions{timeout: defaultCallTimeout}
	fs.DurationVar(&o.timeout, "timeout", defaultCallTimeout, "")
	fs.DurationVar(&o.timeout, "t", defaultCallTimeout, "")
	fs.BoolVar(&o.noWait, "no-wait", false, "")
	o.idl.register(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	if len(pos) != 1 {
		return o, fmt.Errorf("want one 'URI/method(ARG)', got %d arguments", len(pos))
	}
	if o.timeout <= 0 {
		return o, fmt.Errorf("--timeout must be positive")
	}
	o.spec, err = parseCallSpec(pos[0], def)
	return o, err
}

func runCall(ctx context.Context, args []string, io stdio) int {
	o, err := parseCall(args, defaultURI())
	if err != nil {
		return usageError(io, "call", callUsage, err)
	}
	src, err := o.idl.sources(ctx, io)
	if err != nil {
		return fail(io, "call", err)
	}
	arg, err := parseEventSpec(o.spec.arg, src)
	if err != nil {
		return fail(io, "call", err)
	}
	rep, err := call(ctx, o, arg)
	var re *client.RemoteError
	switch {
	case errors.As(err, &re):
		fmt.Fprintf(io.err, "rsb call: remote error from %s: %s\n", re.Scope, re.Message)
		return exitFailure
	case errors.Is(err, client.ErrTimeout):
		fmt.Fprintf(io.err, "rsb call: no reply from %s within %v\n", o.spec.server.Scope, o.timeout)
		return exitTimeout
	case err != nil:
		return fail(io, "call", err)
	case rep == nil:
		return exitOK
	}
	if err := formatPayload(io.out, decodeIDL(ctx, src.idl, rep)); err != nil {
		return fail(io, "call", err)
	}
	return exitOK
}

// call performs the call (or only sends the request with --no-wait).
func call(ctx context.Context, o callOptions, arg any) (*client.Event, error) {
	reg, err := registryFor(arg)
	if err != nil {
		return nil, err
	}
	bus, err := dialRegistry(ctx, o.spec.server, reg)
	if err != nil {
		return nil, err
	}
	defer bus.Close()
	if o.noWait {
		return nil, sendRequest(ctx, bus, o, arg)
	}
	rs, err := bus.NewRemoteServer(o.spec.server.Scope, client.WithCallTimeout(o.timeout))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	return rs.CallEvent(ctx, o.spec.method, arg)
}

// sendRequest publishes a REQUEST nobody waits for.
func sendRequest(ctx context.Context, bus *client.Bus, o callOptions, arg any) error {
	inf, err := bus.NewInformer(o.spec.server.Scope)
	if err != nil {
		return err
	}
	sub, err := scope.Parse("/" + o.spec.method)
	if err != nil {
		return err
	}
	ev := &client.Event{Payload: arg}
	ev.Method = client.MethodRequest
	ev.Scope = o.spec.server.Scope.Concat(sub)
	if err := inf.PublishEvent(ctx, ev); err != nil {
		return err
	}
	return bus.Close()
}
