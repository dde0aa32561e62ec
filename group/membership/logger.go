package membership

import (
	"bytes"
	"context"
	"log"
	"log/slog"
)

// newMemberlistLogger returns a *log.Logger for memberlist that forwards each
// line to l at debug level, with memberlist's own level ("DEBUG", "WARN",
// "ERR", ...) as the attribute ml_level.
func newMemberlistLogger(l *slog.Logger) *log.Logger {
	return log.New(slogWriter{l: l}, "", 0)
}

// slogWriter adapts the lines log.Logger writes (one per Write) to slog.
type slogWriter struct {
	l *slog.Logger
}

// Write logs one line; it never fails.
func (w slogWriter) Write(p []byte) (int, error) {
	if !w.l.Enabled(context.Background(), slog.LevelDebug) {
		return len(p), nil
	}
	line := bytes.TrimRight(p, "\r\n")
	level := ""
	if len(line) > 0 && line[0] == '[' {
		if end := bytes.IndexByte(line, ']'); end > 0 {
			level = string(line[1:end])
			line = bytes.TrimLeft(line[end+1:], " ")
		}
	}
	line = bytes.TrimPrefix(line, []byte("memberlist: "))
	w.l.Debug(string(line), "component", "memberlist", "ml_level", level)
	return len(p), nil
}
