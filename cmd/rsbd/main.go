package main

import (
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	// Signals are caught from the start, so that one arriving while the
	// daemon starts still shuts it down in order.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	// SIGHUP reloads what is configured to be reloaded (the gateway's TLS
	// certificate and tokens, which catch it then); it never ends the
	// daemon, so "systemctl reload" is safe whatever the configuration.
	signal.Ignore(syscall.SIGHUP)
	os.Exit(run(process{
		args:    os.Args[1:],
		environ: os.Environ(),
		stdout:  os.Stdout,
		stderr:  os.Stderr,
		signals: signals,
	}))
}
