package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/config"
	"github.com/rsbd/rsbd/introspection"
	"github.com/rsbd/rsbd/notification"
)

const infoUsage = `usage: rsb info [OPTIONS] [URI]

Show what the tools use: the RSB configuration as the cascade of files and
RSB_* variables resolved it, the transport and the daemon it reaches, the
payload converters and the participant kinds. Without options every
section but the participants is shown.

Options:
  --configuration   every configuration key, its value and where it came from
  --transports      the socket transport the tools use, and the rsbd daemon
                    it reaches (name, version, peers)
  --converters      the wire schemas and the Go types they convert
  --participants    the participant kinds and the participants announced on
                    the bus
  --verbose, -v     every section, with more detail
  --response-timeout D  how long to wait for the daemon's answers (default 1s)
`

// infoOptions is the parsed command line of info.
type infoOptions struct {
	configuration, transports, converters, participants, verbose bool

	timeout time.Duration
	uri     client.URI
}

func parseInfo(args []string, def client.URI) (infoOptions, error) {
	fs := flag.NewFlagSet("info", flag.ContinueOnError)
	var o infoOptions
	fs.BoolVar(&o.configuration, "configuration", false, "")
	fs.BoolVar(&o.transports, "transports", false, "")
	fs.BoolVar(&o.converters, "converters", false, "")
	fs.BoolVar(&o.participants, "participants", false, "")
	fs.BoolVar(&o.verbose, "verbose", false, "")
	fs.BoolVar(&o.verbose, "v", false, "")
	fs.DurationVar(&o.timeout, "response-timeout", introspection.DefaultResponseTimeout, "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	if len(pos) > 1 {
		return o, fmt.Errorf("want at most one URI, got %d", len(pos))
	}
	if o.timeout <= 0 {
		return o, fmt.Errorf("--response-timeout must be positive")
	}
	if o.verbose {
		o.configuration, o.transports, o.converters, o.participants = true, true, true, true
	} else if !o.configuration && !o.transports && !o.converters && !o.participants {
		o.configuration, o.transports, o.converters = true, true, true
	}
	o.uri = def
	if len(pos) == 1 {
		o.uri, err = client.ParseURIDefault(pos[0], def)
	}
	return o, err
}

func runInfo(ctx context.Context, args []string, io stdio) int {
	o, err := parseInfo(args, defaultURI())
	if err != nil {
		return usageError(io, "info", infoUsage, err)
	}
	code := exitOK
	if o.configuration {
		if err := infoConfiguration(io.out); err != nil {
			code = fail(io, "info", err)
		}
	}
	if o.transports || o.participants {
		if err := infoBus(ctx, o, io.out); err != nil {
			code = fail(io, "info", err)
		}
	}
	if o.converters {
		infoConverters(io.out)
	}
	return code
}

// infoConfiguration prints the resolved configuration with provenance.
func infoConfiguration(w io.Writer) error {
	fmt.Fprintln(w, "Configuration")
	cfg, err := config.Load(config.LoadOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	var b strings.Builder
	if err := cfg.Dump(&b); err != nil {
		return err
	}
	if b.Len() == 0 {
		fmt.Fprintln(w, "  (no file or RSB_* variable sets anything: defaults apply)")
	}
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			fmt.Fprint(w, "  "+line)
		}
	}
	for _, warn := range cfg.Warnings() {
		fmt.Fprintln(w, "  warning: "+warn)
	}
	return nil
}

// infoBus prints the transport and the daemon it reaches, and the
// participants on the bus.
func infoBus(ctx context.Context, o infoOptions, w io.Writer) error {
	if o.transports {
		fmt.Fprintln(w, "Transports")
		fmt.Fprintf(w, "  socket       %s (introspection %s)\n", o.uri, onOff(loadSettings().intro))
	}
	start := time.Now()
	b, err := dial(ctx, o.uri)
	if err != nil {
		return fmt.Errorf("cannot reach the daemon at %s: %w", o.uri, err)
	}
	defer b.Close()
	if o.transports {
		fmt.Fprintf(w, "  connected in %v\n", time.Since(start).Round(time.Microsecond))
		if err := infoDaemons(ctx, o, b, w); err != nil {
			return err
		}
	}
	if o.participants {
		return infoParticipants(ctx, o, b, w)
	}
	return nil
}

// infoDaemons prints the daemon the tools reach and its cluster.
func infoDaemons(ctx context.Context, o infoOptions, b *client.Bus, w io.Writer) error {
	ds, err := introspection.SurveyDaemons(ctx, b, o.timeout)
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		fmt.Fprintln(w, "  no rsbd daemon answered (an RSB socket server of another implementation?)")
		return nil
	}
	own := slices.IndexFunc(ds, func(d introspection.DaemonStatus) bool { return sameSocket(d.Socket, o.uri) })
	if own >= 0 {
		d := ds[own]
		fmt.Fprintf(w, "  daemon       %s on %s, pid %d, rsbd %s, up %v\n", d.Name, d.Hostname, d.PID, d.Version,
			time.Since(d.Started).Round(time.Second))
		fmt.Fprintf(w, "  gossip       %s, data %s, %d clients, %d joined groups\n", d.Gossip, d.Data, d.Connections, d.JoinedGroups)
	}
	fmt.Fprintf(w, "  cluster      %d daemons:", len(ds))
	for _, d := range ds {
		fmt.Fprint(w, " "+d.Name)
	}
	fmt.Fprintln(w)
	if o.verbose && own >= 0 {
		fmt.Fprintf(w, "  listening    %s\n", strings.Join(ds[own].Listening, " "))
	}
	return nil
}

// sameSocket reports whether a daemon's socket address has u's port.
func sameSocket(addr string, u client.URI) bool {
	if u.Path != "" {
		return false
	}
	_, port, ok := strings.Cut(addr[strings.LastIndex(addr, "]")+1:], ":")
	return ok && port == fmt.Sprint(u.Port)
}

// infoParticipants prints the kinds the Go client implements and the
// participants announced on the bus.
func infoParticipants(ctx context.Context, o infoOptions, b *client.Bus, w io.Writer) error {
	fmt.Fprintln(w, "Participants")
	fmt.Fprintf(w, "  kinds        %s\n", strings.Join([]string{client.KindInformer, client.KindListener, client.KindReader,
		client.KindLocalServer, client.KindRemoteServer}, " "))
	c, err := introspection.NewCollector(b, introspection.Config{ResponseTimeout: o.timeout})
	if err != nil {
		return err
	}
	defer c.Close()
	select {
	case <-time.After(o.timeout):
	case <-ctx.Done():
	}
	hosts, procs, parts := func() (int, int, int) { s := c.Snapshot(); return s.Count() }()
	fmt.Fprintf(w, "  on the bus   %d participants in %d processes on %d hosts (rsb introspect shows them)\n", parts, procs, hosts)
	return nil
}

// infoConverters prints the wire schemas the tools convert.
func infoConverters(w io.Writer) {
	fmt.Fprintln(w, "Converters")
	reg := notification.DefaultRegistry()
	schemas := reg.Schemas()
	slices.Sort(schemas)
	for _, s := range schemas {
		c, err := reg.ForSchema(s)
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "  %-38s %s\n", s, c.GoType())
	}
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
