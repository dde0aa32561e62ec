package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
)

const loggerUsage = `usage: rsb logger [OPTIONS] [URI...]

Print the events on the scopes of the URIs (default: the root scope of the
local daemon) until interrupted. Events under /__rsb/ (introspection) are
shown only when a URI names a scope there.

Options:
  --style S, -s S          detailed (default), compact, payload or json
  --filter SPEC, -f SPEC   show only matching events (repeatable, all must match):
                             scope /a/b | method M | origin UUID |
                             wire-schema S | regex RE (on the payload bytes)
  --stop-after N           exit after N events
  --max-queued-events N    events queued per URI before dropping (default 4096)
  --max-queued-bytes N     bytes of events queued per URI before dropping
                           (default 67108864)

Events dropped because the output could not keep up are counted on stderr
when the logger ends.
`

// loggerOptions is the parsed command line of logger.
type loggerOptions struct {
	style     formatter
	filters   []client.Filter
	stopAfter int
	queue     int
	bytes     int64
	uris      []client.URI
}

func parseLogger(args []string, def client.URI) (loggerOptions, error) {
	fs := flag.NewFlagSet("logger", flag.ContinueOnError)
	o := loggerOptions{}
	var style string
	var filters listFlag
	fs.StringVar(&style, "style", "detailed", "")
	fs.StringVar(&style, "s", "detailed", "")
	fs.Var(&filters, "filter", "")
	fs.Var(&filters, "f", "")
	fs.IntVar(&o.stopAfter, "stop-after", 0, "")
	fs.IntVar(&o.queue, "max-queued-events", defaultLoggerQueue, "")
	fs.Int64Var(&o.bytes, "max-queued-bytes", client.DefaultQueueBytes, "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	if o.style = styles[style]; o.style == nil {
		return o, fmt.Errorf("unknown style %q (want %s)", style, styleNames())
	}
	if o.stopAfter < 0 || o.queue <= 0 || o.bytes <= 0 {
		return o, fmt.Errorf("--stop-after must not be negative, --max-queued-events and --max-queued-bytes must be positive")
	}
	for _, spec := range filters {
		f, err := parseFilter(spec)
		if err != nil {
			return o, err
		}
		o.filters = append(o.filters, f)
	}
	if len(pos) == 0 {
		pos = []string{""}
	}
	for _, p := range pos {
		u, err := client.ParseURIDefault(p, def)
		if err != nil {
			return o, err
		}
		o.uris = append(o.uris, u)
	}
	return o, nil
}

func styleNames() string {
	var names []string
	for n := range styles {
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Sprint(names)
}

func runLogger(ctx context.Context, args []string, io stdio) int {
	o, err := parseLogger(args, defaultURI())
	if err != nil {
		return usageError(io, "logger", loggerUsage, err)
	}
	if err := logEvents(ctx, o, io.out, io.err); err != nil {
		return fail(io, "logger", err)
	}
	return exitOK
}

// printer serializes the output of all listeners and counts events.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	style formatter
	left  int // events until stop; -1 for no limit
	err   error
	done  chan struct{}
}

// print formats one event unless the limit was reached.
func (p *printer) print(ev *client.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.left == 0 || p.err != nil {
		return nil
	}
	if err := p.style(p.w, ev); err != nil {
		p.err = err
		close(p.done)
		return err
	}
	if p.left > 0 {
		p.left--
		if p.left == 0 {
			close(p.done)
		}
	}
	return nil
}

// logEvents listens on every URI (one connection per daemon) until ctx
// ends, the output fails or --stop-after events were printed; then it
// tells errw how many events its listeners dropped, if any.
func logEvents(ctx context.Context, o loggerOptions, w, errw io.Writer) error {
	p := &printer{w: w, style: o.style, left: -1, done: make(chan struct{})}
	if o.stopAfter > 0 {
		p.left = o.stopAfter
	}
	buses := map[string]*client.Bus{}
	var listeners []*client.Listener
	defer func() {
		var stats []client.ListenerStats
		for _, l := range listeners {
			stats = append(stats, l.Stats())
		}
		if msg := dropReport(stats); msg != "" {
			fmt.Fprintln(errw, msg)
		}
		for _, b := range buses {
			b.Close()
		}
	}()
	for _, u := range o.uris {
		b := buses[u.Addr()]
		if b == nil {
			var err error
			if b, err = dial(ctx, u); err != nil {
				return err
			}
			buses[u.Addr()] = b
		}
		filters := append([]client.Filter{visibleIn(u)}, o.filters...)
		l, err := b.NewListener(u.Scope, client.WithFilter(filters...),
			client.WithQueue(o.queue, client.DropNewest), client.WithQueueBytes(o.bytes))
		if err != nil {
			return err
		}
		listeners = append(listeners, l)
		l.AddHandler(p.print)
	}
	select {
	case <-ctx.Done():
		return nil
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.err
	}
}

// dropReport says how many events the listeners dropped, or nothing.
func dropReport(stats []client.ListenerStats) string {
	var dropped, forBytes uint64
	for _, st := range stats {
		dropped += st.Dropped
		forBytes += st.DroppedForBytes
	}
	if dropped == 0 {
		return ""
	}
	return fmt.Sprintf("rsb logger: %d events dropped, the output not keeping up (%d over --max-queued-events, %d over --max-queued-bytes)",
		dropped, dropped-forBytes, forBytes)
}

// visibleIn hides introspection events unless u's scope is itself reserved.
func visibleIn(u client.URI) client.Filter {
	if u.Scope.IsReserved() {
		return func(*notification.Event) bool { return true }
	}
	return func(ev *notification.Event) bool { return !ev.Scope.IsReserved() }
}
