package postgres

import (
	"fmt"
	"log/slog"
	"time"
)

// Options tune the store. The zero value is valid: every field has a
// default.
type Options struct {
	// Logger receives the store's log lines. Default: discard.
	Logger *slog.Logger

	// MaxConns is the size of the connection pool (reads, appends,
	// snapshots; the listener has a connection of its own). Default 8;
	// 2 to 1000.
	MaxConns int

	// MaxBatchEvents bounds the events one group-commit transaction
	// carries (an append larger than it goes alone). Default 4096; 1 to
	// 1,000,000.
	MaxBatchEvents int

	// PollInterval is how often an idle Subscribe reads the log when no
	// notification came (LISTEN/NOTIFY wakes it at once otherwise).
	// Default 1 s; 10 ms to 1 min.
	PollInterval time.Duration

	// OpTimeout bounds one transaction of the committer and one attempt to
	// reach the server (connect timeout), so that an unreachable server
	// fails appends instead of holding them; and how long appends whose
	// commit may have landed, its answer lost, are held for the server to
	// say (resolve.go). Default 30 s; 100 ms to 10 min.
	OpTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxConns == 0 {
		o.MaxConns = 8
	}
	if o.MaxBatchEvents == 0 {
		o.MaxBatchEvents = 4096
	}
	if o.PollInterval == 0 {
		o.PollInterval = time.Second
	}
	if o.OpTimeout == 0 {
		o.OpTimeout = 30 * time.Second
	}
	return o
}

// Validate reports the first field out of its limits, defaults applied.
func (o Options) Validate() error {
	o = o.withDefaults()
	switch {
	case o.MaxConns < 2 || o.MaxConns > 1000:
		return fmt.Errorf("%w: MaxConns %d: must be 2 to 1000", ErrOptions, o.MaxConns)
	case o.MaxBatchEvents < 1 || o.MaxBatchEvents > 1_000_000:
		return fmt.Errorf("%w: MaxBatchEvents %d: must be 1 to 1000000", ErrOptions, o.MaxBatchEvents)
	case o.PollInterval < 10*time.Millisecond || o.PollInterval > time.Minute:
		return fmt.Errorf("%w: PollInterval %s: must be 10ms to 1m", ErrOptions, o.PollInterval)
	case o.OpTimeout < 100*time.Millisecond || o.OpTimeout > 10*time.Minute:
		return fmt.Errorf("%w: OpTimeout %s: must be 100ms to 10m", ErrOptions, o.OpTimeout)
	}
	return nil
}
