package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/introspection"
)

const introspectUsage = `usage: rsb introspect [OPTIONS] [URI...]

Show the hosts, processes and participants of the bus (or buses) at URI
(default: the local daemon) as a tree: each host with its state, clock
offset and latency (from the processes' echo servers), machine and
software; each process with its state, program and arguments, uptime,
user, RSB version and transports; each participant with its id, kind and
scope.

Options:
  --style S, -s S          object-tree (default): print the tree once;
                           monitor: keep it on screen, redrawn as it changes
                           (on a terminal), or print the tree and then one
                           line per change (host, process or participant
                           added or removed, state changed);
                           json: print the tree as JSON once
  --response-timeout D     how long to wait for answers (default 1s)
  --daemons                show the rsbd daemons of the cluster instead:
                           their peers, listening scopes, groups received
                           and sent, traffic by path and by scope, drops
`

// introspectOptions is the parsed command line of introspect.
type introspectOptions struct {
	style   string
	timeout time.Duration
	daemons bool
	uris    []client.URI
}

func parseIntrospect(args []string, def client.URI) (introspectOptions, error) {
	fs := flag.NewFlagSet("introspect", flag.ContinueOnError)
	o := introspectOptions{}
	fs.StringVar(&o.style, "style", "object-tree", "")
	fs.StringVar(&o.style, "s", "object-tree", "")
	fs.DurationVar(&o.timeout, "response-timeout", introspection.DefaultResponseTimeout, "")
	fs.BoolVar(&o.daemons, "daemons", false, "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	switch o.style {
	case "object-tree", "monitor", "json":
	default:
		return o, fmt.Errorf("unknown style %q (want object-tree, monitor or json)", o.style)
	}
	if o.timeout <= 0 {
		return o, fmt.Errorf("--response-timeout must be positive")
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

func runIntrospect(ctx context.Context, args []string, io stdio) int {
	o, err := parseIntrospect(args, defaultURI())
	if err != nil {
		return usageError(io, "introspect", introspectUsage, err)
	}
	var buses []*client.Bus
	defer func() {
		for _, b := range buses {
			b.Close()
		}
	}()
	for _, u := range o.uris {
		b, err := dial(ctx, u)
		if err != nil {
			return fail(io, "introspect", err)
		}
		buses = append(buses, b)
	}
	if o.daemons {
		err = showDaemons(ctx, o, buses, io.out)
	} else {
		err = introspect(ctx, o, buses, io.out)
	}
	if err != nil {
		return fail(io, "introspect", err)
	}
	return exitOK
}

// introspect collects on every bus and prints in o's style.
func introspect(ctx context.Context, o introspectOptions, buses []*client.Bus, out io.Writer) error {
	cfg := introspection.Config{ResponseTimeout: o.timeout, PingInterval: max(o.timeout/4, 10*time.Millisecond)}
	var cs []*introspection.Collector
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	for _, b := range buses {
		c, err := introspection.NewCollector(b, cfg)
		if err != nil {
			return err
		}
		cs = append(cs, c)
	}
	select {
	case <-time.After(o.timeout):
	case <-ctx.Done():
		return nil
	}
	for _, c := range cs {
		c.PingAll(ctx)
	}
	snap := func() introspection.Snapshot {
		var ss []introspection.Snapshot
		for _, c := range cs {
			ss = append(ss, c.Snapshot())
		}
		return introspection.Merge(ss...)
	}
	switch o.style {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(snap())
	case "monitor":
		return monitor(ctx, cs, snap, out)
	}
	return introspection.WriteTree(out, snap(), time.Now())
}

// showDaemons surveys the daemons through every bus.
func showDaemons(ctx context.Context, o introspectOptions, buses []*client.Bus, out io.Writer) error {
	byName := make(map[string]introspection.DaemonStatus)
	var all []introspection.DaemonStatus
	for _, b := range buses {
		ds, err := introspection.SurveyDaemons(ctx, b, o.timeout)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if _, dup := byName[d.Name]; !dup {
				byName[d.Name] = d
				all = append(all, d)
			}
		}
	}
	if o.style == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	}
	return introspection.WriteDaemons(out, all, time.Now())
}
