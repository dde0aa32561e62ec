package main

import (
	"io"
	"log/slog"
	"os"
)

// newLogger returns the daemon's logger writing to w: text when format is
// logText, or logAuto and w is a terminal; JSON otherwise (journald, files,
// pipes and log shippers read one JSON object per line).
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == logText || (format == logAuto && isTerminal(w)) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
