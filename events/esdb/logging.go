package esdb

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
)

// clientLogger sends the client library's log lines to log at DEBUG,
// whatever level the client gives them: against an unreachable server the
// client writes several lines per connection attempt, most of them
// "error", for what the adapter retries. The adapter logs the outcome
// itself: one WARN line per failed connection attempt, with its backoff
// (clients.retire), and one INFO line when the server is reached again.
// client_level keeps the client's own level.
func clientLogger(log *slog.Logger) esdb.LoggingFunc {
	return func(level esdb.LogLevel, format string, args ...any) {
		ctx := context.Background()
		if !log.Enabled(ctx, slog.LevelDebug) {
			return
		}
		log.Log(ctx, slog.LevelDebug, "esdb client: "+fmt.Sprintf(format, args...), "client_level", level)
	}
}
