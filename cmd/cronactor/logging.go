package main

import (
	"io"
	"log/slog"
)

// newLogger is the daemon's one logger: every line of a run in one format
// (text or JSON), stable snake_case keys with stable types. It becomes
// slog's default too, so that nothing logs beside it in another format.
func newLogger(w io.Writer, format string) *slog.Logger {
	opts := &slog.HandlerOptions{ReplaceAttr: stableAttr}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	l := slog.New(h)
	slog.SetDefault(l)
	return l
}

// stableAttr keeps keys and types the same wherever a value is logged:
// a duration is always a Go duration string ("1.5s", as the API writes
// durations), never nanoseconds in one line and a string in another; an
// error is always under "error".
func stableAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Key == "err" {
		a.Key = "error"
	}
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	if err, ok := a.Value.Any().(error); ok && a.Value.Kind() == slog.KindAny {
		a.Value = slog.StringValue(err.Error())
	}
	return a
}
