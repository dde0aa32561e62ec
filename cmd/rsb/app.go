package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/config"
	"github.com/rsbd/rsbd/notification"
)

// stdio is the tool's standard streams.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// verb is one tool.
type verb struct {
	run   func(ctx context.Context, args []string, io stdio) int
	usage string
}

var verbs map[string]verb

func init() {
	verbs = map[string]verb{
		"send":       {runSend, sendUsage},
		"logger":     {runLogger, loggerUsage},
		"call":       {runCall, callUsage},
		"bridge":     {runBridge, bridgeUsage},
		"introspect": {runIntrospect, introspectUsage},
		"info":       {runInfo, infoUsage},
		"web":        {runWeb, webUsage},
	}
}

// run dispatches to the tool named by args[0] and returns the exit code.
func run(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 {
		fmt.Fprint(io.err, usage)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "--help":
		if len(args) > 1 {
			if v, ok := verbs[args[1]]; ok {
				fmt.Fprint(io.out, v.usage)
				return exitOK
			}
		}
		fmt.Fprint(io.out, usage)
		return exitOK
	}
	v, ok := verbs[args[0]]
	if !ok {
		fmt.Fprintf(io.err, "rsb: unknown tool %q\n\n%s", args[0], usage)
		return exitUsage
	}
	return v.run(ctx, args[1:], io)
}

// usageError reports a command-line error (or prints help) and returns the
// exit code.
func usageError(io stdio, tool, text string, err error) int {
	if errors.Is(err, errHelp) {
		fmt.Fprint(io.out, text)
		return exitOK
	}
	fmt.Fprintf(io.err, "rsb %s: %v\n\n%s", tool, err, text)
	return exitUsage
}

// fail reports an error and returns exitFailure.
func fail(io stdio, tool string, err error) int {
	fmt.Fprintf(io.err, "rsb %s: %v\n", tool, err)
	return exitFailure
}

// settings are what the RSB configuration (files, RSB_* environment) says
// about the tools' connection, read once.
type settings struct {
	uri   client.URI // host and port of the default bus
	intro bool       // introspection.enabled
}

var loadSettings = sync.OnceValue(func() settings {
	return settingsFrom(config.LoadOptions{Logger: slog.New(slog.DiscardHandler)})
})

// settingsFrom reads the tools' settings from the configuration o loads;
// an unreadable configuration leaves the defaults.
func settingsFrom(o config.LoadOptions) settings {
	st := settings{uri: client.DefaultURI(), intro: true}
	cfg, err := config.Load(o)
	if err != nil {
		return st
	}
	if h := cfg.String(config.KeySocketHost, ""); h != "" {
		st.uri.Host = h
	}
	if p, err := strconv.Atoi(cfg.String(config.KeySocketPort, "")); err == nil && p > 0 && p < 65536 {
		st.uri.Port = p
	}
	if p := strings.TrimSpace(cfg.String(config.KeySocketPath, "")); p != "" {
		st.uri.Path = p
	}
	if on, err := cfg.Bool(keyIntrospection, true); err == nil {
		st.intro = on
	}
	return st
}

// defaultURI is the bus the tools use when no URI is given: the RSB
// configuration's socket host and port, else the local daemon.
func defaultURI() client.URI { return loadSettings().uri }

// dial connects to the bus of u for a tool.
func dial(ctx context.Context, u client.URI) (*client.Bus, error) { return dialRegistry(ctx, u, nil) }

// dialRegistry connects to the bus of u with a registry of converters (nil:
// the default).
func dialRegistry(ctx context.Context, u client.URI, reg *notification.Registry) (*client.Bus, error) {
	ctx, cancel := context.WithTimeout(ctx, defaultDialTimeout)
	defer cancel()
	return client.DialConfig(ctx, u.Addr(), client.Config{
		Logger:          slog.New(slog.DiscardHandler),
		NoIntrospection: !loadSettings().intro,
		Registry:        reg,
	})
}

const usage = `usage: rsb TOOL [OPTIONS] ARGS

Tools:
  send     publish one event
  logger   print the events on one or more scopes
  call     call a method of an RSB server
  bridge   forward events between daemons or scopes
  introspect  show the hosts, processes and participants of the bus
  info     show the configuration, transports, converters and daemon
  web      serve introspection and a live view of the bus over HTTP

Run "rsb help TOOL" for a tool's options.
`
