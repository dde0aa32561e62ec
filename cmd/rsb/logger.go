package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
)

const loggerUsage = `usage: rsb logger [OPTIONS] [URI...]

Print the events on the scopes of the URIs (default: the root scope of the
local daemon) until interrupted. Events under /__rsb/ (introspection) are
shown only when a URI names a scope there.

Options:
  --style S, -s S          detailed (default), compact, columns, payload, json,
                           meta-data, timeline, monitor (per-scope counts and
                           rates, redrawn in place on a terminal), statistics
                           (rate, throughput, size, latency per period) or
                           discard (print nothing)
  --refresh D              how often monitor and statistics print (default 1s)
  --filter SPEC, -f SPEC   show only matching events (repeatable, all must match):
                             scope /a/b | method M | origin UUID |
                             wire-schema S | regex RE (on the payload bytes)
  --stop-after N           exit after N events
  --max-queued-events N    events queued per URI before dropping (default 4096)
  --max-queued-bytes N     bytes of events queued per URI before dropping
                           (default 67108864)
` + idlUsage + `
Payloads of a protobuf message type of a loaded .proto file are shown as
text, and as JSON in the json style. Events dropped because the output
could not keep up are counted on stderr when the logger ends.
`

// loggerOptions is the parsed command line of logger.
type loggerOptions struct {
	style     string
	refresh   time.Duration
	filters   []client.Filter
	stopAfter int
	queue     int
	bytes     int64
	uris      []client.URI
	idl       idlFlags
	// listening, when set, is told each listener the logger creates (tests
	// watch their statistics).
	listening func(*client.Listener)
}

func parseLogger(args []string, def client.URI) (loggerOptions, error) {
	fs := flag.NewFlagSet("logger", flag.ContinueOnError)
	o := loggerOptions{}
	var filters listFlag
	fs.StringVar(&o.style, "style", "detailed", "")
	fs.StringVar(&o.style, "s", "detailed", "")
	fs.Var(&filters, "filter", "")
	fs.Var(&filters, "f", "")
	fs.DurationVar(&o.refresh, "refresh", defaultRefresh, "")
	fs.IntVar(&o.stopAfter, "stop-after", 0, "")
	fs.IntVar(&o.queue, "max-queued-events", defaultLoggerQueue, "")
	fs.Int64Var(&o.bytes, "max-queued-bytes", client.DefaultQueueBytes, "")
	o.idl.register(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	if newStyles[o.style] == nil {
		return o, fmt.Errorf("unknown style %q (want %s)", o.style, styleNames())
	}
	if o.stopAfter < 0 || o.queue <= 0 || o.bytes <= 0 || o.refresh <= 0 {
		return o, fmt.Errorf("--stop-after must not be negative, --max-queued-events, --max-queued-bytes and --refresh must be positive")
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
	for n := range newStyles {
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
	if err := logEvents(ctx, o, io); err != nil {
		return fail(io, "logger", err)
	}
	return exitOK
}

// printer serializes the output of all listeners and counts events.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	style style
	idl   *idlSet // decodes payloads of loaded .proto message types
	ctx   context.Context
	left  int // events until stop; -1 for no limit
	err   error
	done  chan struct{} // closed by stop
	once  sync.Once
}

// stop ends the logger (its limit reached or the output failed).
func (p *printer) stop() { p.once.Do(func() { close(p.done) }) }

// print formats one event unless the limit was reached.
func (p *printer) print(ev *client.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.left == 0 || p.err != nil {
		return nil
	}
	if err := p.style.event(p.w, decodeIDL(p.ctx, p.idl, ev)); err != nil {
		p.err = err
		p.stop()
		return err
	}
	if p.left > 0 {
		p.left--
		if p.left == 0 {
			p.stop()
		}
	}
	return nil
}

// logEvents listens on every URI (one connection per daemon) until ctx
// ends, the output fails or --stop-after events were printed; then it
// tells stderr how many events its listeners dropped, if any.
func logEvents(ctx context.Context, o loggerOptions, sio stdio) error {
	w, errw := sio.out, sio.err
	env := styleEnv{tty: isTerminal(w), start: time.Now(), now: time.Now}
	idl, err := o.idl.load(ctx)
	if err != nil {
		return err
	}
	p := &printer{w: w, style: newStyles[o.style](env), idl: idl, ctx: ctx, left: -1, done: make(chan struct{})}
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
		if o.listening != nil {
			o.listening(l)
		}
		l.AddHandler(p.print)
	}
	stopRefresh := p.refreshEvery(o.refresh)
	select {
	case <-ctx.Done():
	case <-p.done:
	}
	stopRefresh()
	return p.finish()
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

// refreshEvery makes a refresher style print every period until the
// returned function is called, which waits for the last print.
func (p *printer) refreshEvery(period time.Duration) (stop func()) {
	r, ok := p.style.(refresher)
	if !ok {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case now := <-t.C:
				p.mu.Lock()
				if p.err == nil {
					if p.err = r.refresh(p.w, now, false); p.err != nil {
						p.stop()
					}
				}
				p.mu.Unlock()
			}
		}
	}()
	return func() { close(quit); <-done }
}

// finish prints a refresher style's final view and returns the first
// output error.
func (p *printer) finish() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.left = 0 // events still arriving are not printed after the final view
	if r, ok := p.style.(refresher); ok && p.err == nil {
		p.err = r.refresh(p.w, time.Now(), true)
	}
	return p.err
}

// isTerminal reports whether w is a terminal, where the monitor redraws.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
