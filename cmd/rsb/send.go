package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
)

const sendUsage = `usage: rsb send [OPTIONS] EVENT-SPEC [URI]

Publish one event on the scope of URI (default: the root scope of the local
daemon).

EVENT-SPEC:
  ''               void (no payload)
  true, false      bool
  "text"           utf-8-string (\" and \\ escape)
  123, -5          int64
  1.5, 2e3         double
  /a/b             scope
  -                standard input as utf-8-string
  -:binary         standard input as bytes
  #P"file"         the file as utf-8-string (also #P"file":utf-8)
  #P"file":binary  the file as bytes
  pb:.pkg.Msg:{x: 1 y: 2}
                   a protobuf message of a loaded .proto file, in text format

Options:
  --method M               the event's method
  --meta-data K=V, -D K=V  add a user info (repeatable)
  --timestamp K=TIME       add a user time, TIME in RFC 3339 (repeatable)
  --cause ID:SEQ, -c       add a cause: sender UUID and sequence number (repeatable)
` + idlUsage

// sendOptions is the parsed command line of send.
type sendOptions struct {
	method string
	infos  [][2]string
	times  []notification.UserTime
	causes []notification.EventID
	spec   string
	uri    client.URI
	idl    idlFlags
}

// parseSend parses send's arguments.
func parseSend(args []string, def client.URI) (sendOptions, error) {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	var o sendOptions
	var infos, times, causes listFlag
	fs.StringVar(&o.method, "method", "", "")
	fs.Var(&infos, "meta-data", "")
	fs.Var(&infos, "D", "")
	fs.Var(&times, "timestamp", "")
	fs.Var(&times, "T", "")
	fs.Var(&causes, "cause", "")
	fs.Var(&causes, "c", "")
	o.idl.register(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return o, fmt.Errorf("want EVENT-SPEC [URI], got %d arguments", len(pos))
	}
	o.spec, o.uri = pos[0], def
	if len(pos) == 2 {
		if o.uri, err = client.ParseURIDefault(pos[1], def); err != nil {
			return o, err
		}
	}
	return o, o.parseLists(infos, times, causes)
}

// parseLists parses the repeatable options.
func (o *sendOptions) parseLists(infos, times, causes []string) error {
	for _, s := range infos {
		k, v, err := keyValue(s)
		if err != nil {
			return fmt.Errorf("--meta-data %w", err)
		}
		o.infos = append(o.infos, [2]string{k, v})
	}
	for _, s := range times {
		k, v, err := keyValue(s)
		if err != nil {
			return fmt.Errorf("--timestamp %w", err)
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil || t.UnixMicro() < 0 {
			return fmt.Errorf("--timestamp %s: want an RFC 3339 time after 1970", s)
		}
		o.times = append(o.times, notification.UserTime{Key: k, Time: uint64(t.UnixMicro())})
	}
	for _, s := range causes {
		id, err := notification.ParseEventID(s)
		if err != nil {
			return fmt.Errorf("--cause %q: %w", s, err)
		}
		o.causes = append(o.causes, id)
	}
	return nil
}

// event builds the event to publish from the options and payload.
func (o *sendOptions) event(payload any) *client.Event {
	ev := &client.Event{Payload: payload}
	ev.Method = o.method
	ev.Causes = o.causes
	for _, kv := range o.infos {
		ev.MetaData.SetUserInfo(kv[0], kv[1])
	}
	for _, ut := range o.times {
		ev.MetaData.SetUserTime(ut.Key, ut.Time)
	}
	return ev
}

func runSend(ctx context.Context, args []string, io stdio) int {
	o, err := parseSend(args, defaultURI())
	if err != nil {
		return usageError(io, "send", sendUsage, err)
	}
	src, err := o.idl.sources(ctx, io)
	if err != nil {
		return fail(io, "send", err)
	}
	payload, err := parseEventSpec(o.spec, src)
	if err != nil {
		return fail(io, "send", err)
	}
	if err := send(ctx, o, payload); err != nil {
		return fail(io, "send", err)
	}
	return exitOK
}

// send publishes one event and closes the connection in order, so the
// event is on its way before the tool exits.
func send(ctx context.Context, o sendOptions, payload any) error {
	reg, err := registryFor(payload)
	if err != nil {
		return err
	}
	bus, err := dialRegistry(ctx, o.uri, reg)
	if err != nil {
		return err
	}
	defer bus.Close()
	inf, err := bus.NewInformer(o.uri.Scope)
	if err != nil {
		return err
	}
	if err := inf.PublishEvent(ctx, o.event(payload)); err != nil {
		return err
	}
	return bus.Close()
}
