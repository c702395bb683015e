package esdb

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
)

// clientLogger sends the client library's log lines to log, one level
// lower than the client gives them: the client calls "error" what the
// adapter retries (a dropped subscription, a refused connection), and the
// adapter logs the outcome itself.
func clientLogger(log *slog.Logger) esdb.LoggingFunc {
	return func(level esdb.LogLevel, format string, args ...any) {
		lvl := slog.LevelDebug
		switch level {
		case esdb.LogWarn:
			lvl = slog.LevelInfo
		case esdb.LogError:
			lvl = slog.LevelWarn
		}
		ctx := context.Background()
		if !log.Enabled(ctx, lvl) {
			return
		}
		log.Log(ctx, lvl, "esdb client: "+fmt.Sprintf(format, args...), "client_level", level)
	}
}
