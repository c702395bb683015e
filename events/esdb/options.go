package esdb

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cronactor/cronactor/events"
)

// Options tune the adapter. The zero value is valid: every field has a
// default.
type Options struct {
	// Logger receives the adapter's log lines — while the server cannot
	// be reached, one WARN line per connection attempt ("esdb server
	// unreachable", with attempt, backoff and error), then one INFO line
	// when it is reached again — and the client library's, all at DEBUG
	// (the adapter decides what is worth a warning). Default: discard.
	Logger *slog.Logger

	// StreamPrefixes limits the global log (ReadAll, Subscribe) to the
	// streams whose names start with one of them; "" stands for every
	// stream. System streams (names starting with "$") are never part of it.
	// Default: events.TaskStreamPrefix alone. At most 16 prefixes.
	StreamPrefixes []string

	// Namespace is put in front of every stream name in EventStoreDB (our
	// "task-<uuid>" is stored as Namespace+"task-<uuid>"), so that several
	// schedulers, or test runs, can share one database without seeing each
	// other's streams. It is invisible through the Store. Default: none. At
	// most 64 bytes, printable, not starting with "$"; end it with a
	// separator of your choice, e.g. "staging.".
	Namespace string

	// PageSize is how many events of $all one read request asks for while
	// ReadAll scans for events of our streams. Default 512; 2 to 10000.
	PageSize int

	// RetryFor is how long Append, ReadStream and ReadAll keep retrying
	// while the server cannot be reached (connection refused or lost, no
	// leader), before giving up with ErrUnavailable. The caller's context
	// still bounds every call. Default 30 s; negative: no retry. Subscribe
	// retries for as long as its context lasts.
	RetryFor time.Duration

	// MinBackoff and MaxBackoff bound the wait between two attempts, which
	// doubles from MinBackoff up to MaxBackoff: a call's attempts, and the
	// store's attempts to connect, which all calls share (one at a time). Defaults 20 ms and 2 s;
	// MinBackoff 1 ms to MaxBackoff, MaxBackoff up to 1 min.
	MinBackoff time.Duration
	MaxBackoff time.Duration
}

const maxPrefixes = 16

// withDefaults returns o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StreamPrefixes == nil {
		o.StreamPrefixes = []string{events.TaskStreamPrefix}
	}
	if o.PageSize == 0 {
		o.PageSize = 512
	}
	if o.RetryFor == 0 {
		o.RetryFor = 30 * time.Second
	}
	if o.MinBackoff == 0 {
		o.MinBackoff = 20 * time.Millisecond
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = 2 * time.Second
	}
	return o
}

// Validate reports the first field out of its limits, defaults applied.
func (o Options) Validate() error {
	o = o.withDefaults()
	var errs []error
	if len(o.StreamPrefixes) == 0 || len(o.StreamPrefixes) > maxPrefixes {
		errs = append(errs, fmt.Errorf("%w: StreamPrefixes: want 1 to %d prefixes, got %d", ErrInvalidOptions, maxPrefixes, len(o.StreamPrefixes)))
	}
	for i, p := range o.StreamPrefixes {
		if strings.HasPrefix(p, "$") {
			errs = append(errs, fmt.Errorf("%w: StreamPrefixes[%d]: %q names system streams", ErrInvalidOptions, i, p))
		}
	}
	if len(o.Namespace) > 64 || strings.HasPrefix(o.Namespace, "$") || strings.IndexFunc(o.Namespace, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		errs = append(errs, fmt.Errorf("%w: Namespace: %q must be at most 64 printable bytes not starting with \"$\"", ErrInvalidOptions, o.Namespace))
	}
	if o.PageSize < 2 || o.PageSize > 10000 {
		errs = append(errs, fmt.Errorf("%w: PageSize: %d is outside 2..10000", ErrInvalidOptions, o.PageSize))
	}
	if o.MaxBackoff < 0 || o.MaxBackoff > time.Minute {
		errs = append(errs, fmt.Errorf("%w: MaxBackoff: %s is outside 0..1m", ErrInvalidOptions, o.MaxBackoff))
	}
	if o.MinBackoff < time.Millisecond || o.MinBackoff > o.MaxBackoff {
		errs = append(errs, fmt.Errorf("%w: MinBackoff: %s is outside 1ms..MaxBackoff (%s)", ErrInvalidOptions, o.MinBackoff, o.MaxBackoff))
	}
	return errors.Join(errs...)
}

// includes reports whether a stream, named as stored in EventStoreDB,
// belongs to the global log.
func (o Options) includes(stored string) bool {
	if strings.HasPrefix(stored, "$") {
		return false
	}
	name, ok := strings.CutPrefix(stored, o.Namespace)
	if !ok {
		return false
	}
	for _, p := range o.StreamPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
