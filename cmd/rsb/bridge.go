package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/scope"
)

const bridgeUsage = `usage: rsb bridge [OPTIONS] 'IN -> OUT' | 'A <-> B' [; ...]

Forward the events on IN's scope to OUT's scope (the part of the scope below
IN kept below OUT) until interrupted; A <-> B forwards both ways. IN, OUT, A
and B are URIs, so a bridge joins two rsbd clusters, or an rsbd and any RSB
socket server, by naming their socket addresses; several connections are
separated by ';'. Filters, written as the logger's between bars, may follow
the arrow: 'socket://a:55555/x -> |method M| socket://b:55555/y'.

A spec along which an event could come back where it started by another
way than it came (A -> B; B -> C; C -> A) is refused. Each forwarded event
carries the user info ` + bridgeTagKey + ` naming this bridge and the
direction; a bridge never forwards an event back towards where it was.

Options:
  --filter SPEC, -f SPEC   forward only matching events, every connection
                           (repeatable; see rsb help logger)
  --max-queued-events N    events queued per direction before dropping
                           (default 4096)

Events dropped because an output could not keep up are counted on stderr
when the bridge ends, as are events not sent back.
`

// bridgeTagKey is the user info naming the bridge directions an event was
// forwarded along: "BRIDGE-ID/N" entries separated by spaces, in order.
const bridgeTagKey = "rsb.bridge.via"

// bridgeOptions is the parsed command line of bridge.
type bridgeOptions struct {
	edges   []bridgeEdge
	filters []string
	queue   int
}

func parseBridge(args []string, def client.URI) (bridgeOptions, error) {
	fs := flag.NewFlagSet("bridge", flag.ContinueOnError)
	o := bridgeOptions{}
	var filters listFlag
	fs.Var(&filters, "filter", "")
	fs.Var(&filters, "f", "")
	fs.IntVar(&o.queue, "max-queued-events", defaultLoggerQueue, "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	if o.queue <= 0 {
		return o, fmt.Errorf("--max-queued-events must be positive")
	}
	for _, f := range filters {
		if _, err := parseFilter(f); err != nil {
			return o, err
		}
	}
	o.filters = filters
	if len(pos) == 0 {
		return o, fmt.Errorf("want a bridge spec")
	}
	o.edges, err = parseBridgeSpec(strings.Join(pos, ";"), def)
	return o, err
}

func runBridge(ctx context.Context, args []string, io stdio) int {
	o, err := parseBridge(args, defaultURI())
	if err != nil {
		return usageError(io, "bridge", bridgeUsage, err)
	}
	if err := bridge(ctx, o, io.err); err != nil {
		return fail(io, "bridge", err)
	}
	return exitOK
}

// direction is one running edge of a bridge.
type direction struct {
	id       string          // BRIDGE-ID/N
	ctx      context.Context // ends with the bridge: a publish waiting for room gives up
	edge     bridgeEdge
	inf      *client.Informer
	lis      *client.Listener
	blocked  map[string]bool // tags of the directions whose input hears this one's output
	failed   atomic.Uint64   // publishes that failed
	suppress atomic.Uint64   // events not sent back where they came from
}

// bridge runs the directions of o until ctx ends, then reports on errw
// what was dropped or not sent back.
func bridge(ctx context.Context, o bridgeOptions, errw io.Writer) error {
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	id := hex.EncodeToString(raw[:])
	buses := map[string]*client.Bus{}
	defer func() {
		for _, b := range buses {
			b.Close()
		}
	}()
	busOf := func(u client.URI) (*client.Bus, error) {
		if b := buses[u.Addr()]; b != nil {
			return b, nil
		}
		b, err := dial(ctx, u)
		if err != nil {
			return nil, err
		}
		buses[u.Addr()] = b
		return b, nil
	}
	dirs := make([]*direction, len(o.edges))
	for i, e := range o.edges {
		dirs[i] = &direction{id: id + "/" + strconv.Itoa(i), ctx: ctx, edge: e, blocked: map[string]bool{}}
	}
	for _, d := range dirs {
		for _, f := range dirs {
			if overlaps(f.edge.in, d.edge.out) {
				d.blocked[f.id] = true
			}
		}
	}
	defer func() { bridgeReport(errw, dirs) }()
	for _, d := range dirs {
		if err := d.start(busOf, o); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}

// start opens the direction's informer and listener.
func (d *direction) start(busOf func(client.URI) (*client.Bus, error), o bridgeOptions) error {
	out, err := busOf(d.edge.out)
	if err != nil {
		return err
	}
	if d.inf, err = out.NewInformer(d.edge.out.Scope); err != nil {
		return err
	}
	in, err := busOf(d.edge.in)
	if err != nil {
		return err
	}
	filters := []client.Filter{visibleIn(d.edge.in)}
	for _, spec := range append(append([]string(nil), o.filters...), d.edge.filters...) {
		f, err := parseFilter(spec)
		if err != nil {
			return err
		}
		filters = append(filters, f)
	}
	d.lis, err = in.NewListener(d.edge.in.Scope, client.WithFilter(filters...), client.WithQueue(o.queue, client.DropNewest))
	if err != nil {
		return err
	}
	d.lis.AddHandler(d.forward)
	return nil
}

// forward publishes ev below the output scope, tagged, unless it was
// already forwarded along a direction whose input hears this output (it
// would go back where it was).
func (d *direction) forward(ev *client.Event) error {
	via, _ := ev.MetaData.UserInfo(bridgeTagKey)
	for _, tag := range strings.Fields(via) {
		if d.blocked[tag] {
			d.suppress.Add(1)
			return nil
		}
	}
	fwd := &client.Event{}
	fwd.Scope = relocate(ev.Scope, d.edge.in.Scope, d.edge.out.Scope)
	fwd.Method = ev.Method
	fwd.WireSchema = ev.WireSchema
	fwd.Data = ev.Data
	fwd.Causes = ev.Causes
	fwd.MetaData.CreateTime = ev.MetaData.CreateTime
	for _, ut := range ev.MetaData.UserTimes {
		fwd.MetaData.SetUserTime(ut.Key, ut.Time)
	}
	for _, ui := range ev.MetaData.UserInfos {
		fwd.MetaData.SetUserInfo(ui.Key, ui.Value)
	}
	fwd.MetaData.SetUserInfo(bridgeTagKey, strings.TrimSpace(via+" "+d.id))
	switch {
	case fwd.WireSchema == "":
		fwd.Data = nil // no schema to send raw data under: void
	case fwd.Data == nil:
		fwd.Data = []byte{} // an empty payload is sent as it came, not converted
	}
	if err := d.inf.PublishEvent(d.ctx, fwd); err != nil {
		d.failed.Add(1)
	}
	return nil
}

// relocate moves sc from below in to below out.
func relocate(sc, in, out scope.Scope) scope.Scope {
	rel := strings.TrimPrefix(sc.String(), in.String())
	if rel == "" {
		return out
	}
	sub, err := scope.Parse("/" + rel)
	if err != nil {
		return out // cannot happen: sc is in or below it
	}
	return out.Concat(sub)
}

// bridgeReport tells w, per direction, the events dropped, not sent back
// or not published, if any.
func bridgeReport(w io.Writer, dirs []*direction) {
	for _, d := range dirs {
		var dropped uint64
		if d.lis != nil {
			dropped = d.lis.Stats().Dropped
		}
		if s, f := d.suppress.Load(), d.failed.Load(); dropped+s+f > 0 {
			fmt.Fprintf(w, "rsb bridge: %s -> %s: %d events not sent back, %d dropped (over --max-queued-events), %d not published\n",
				d.edge.in, d.edge.out, s, dropped, f)
		}
	}
}
