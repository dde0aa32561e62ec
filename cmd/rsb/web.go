package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/introspection"
	"github.com/rsbd/rsbd/introspection/web"
)

const webUsage = `usage: rsb web [OPTIONS] [URI]

Serve the bus at URI (default: the local daemon) over HTTP until
interrupted: a page with the host, process and participant tree, the scope
tree with live event rates, the daemons and a live tail of a scope, and the
JSON endpoints /api/introspection/snapshot and /api/introspection/search
(?query=WORDS&start=N&limit=N). It prints the address it serves.

Options:
  --address A           address to listen on (default localhost)
  --port N              port to listen on (default 4444, 0 picks one)
  --response-timeout D  how long to wait for answers (default 1s)
`

// webOptions is the parsed command line of web.
type webOptions struct {
	addr    string
	timeout time.Duration
	uri     client.URI
}

func parseWeb(args []string, def client.URI) (webOptions, error) {
	fs := flag.NewFlagSet("web", flag.ContinueOnError)
	o := webOptions{}
	host := fs.String("address", "localhost", "")
	port := fs.Int("port", defaultWebPort, "")
	fs.DurationVar(&o.timeout, "response-timeout", introspection.DefaultResponseTimeout, "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	if len(pos) > 1 {
		return o, fmt.Errorf("want at most one URI, got %d", len(pos))
	}
	if *port < 0 || *port > 65535 || o.timeout <= 0 {
		return o, fmt.Errorf("--port must be 0..65535 and --response-timeout positive")
	}
	o.addr = net.JoinHostPort(*host, strconv.Itoa(*port))
	o.uri = def
	if len(pos) == 1 {
		o.uri, err = client.ParseURIDefault(pos[0], def)
	}
	return o, err
}

func runWeb(ctx context.Context, args []string, io stdio) int {
	o, err := parseWeb(args, defaultURI())
	if err != nil {
		return usageError(io, "web", webUsage, err)
	}
	b, err := dial(ctx, o.uri)
	if err != nil {
		return fail(io, "web", err)
	}
	defer b.Close()
	c, err := introspection.NewCollector(b, introspection.Config{ResponseTimeout: o.timeout})
	if err != nil {
		return fail(io, "web", err)
	}
	defer c.Close()
	h, err := web.New(b, c, web.Config{ResponseTimeout: o.timeout})
	if err != nil {
		return fail(io, "web", err)
	}
	defer h.Close()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fail(io, "web", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(io.out, "rsb web: serving http://%s/\n", ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		h.Close()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(io, "web", err)
	}
	return exitOK
}
