// Package archetype is the bundle every component of cronactor is built
// with: the clock it reads time and sets timers from, and the logger it
// writes to. One Archetype is made by whoever wires the components (the
// daemon in cmd/, the simulation, a test) and handed to each of them, so
// swapping the clock or the logger swaps it everywhere at once — the idea
// of River's baseservice.Archetype.
//
// It imports only the standard library, package clock, which imports only
// the standard library, and package events (for the store's refusals, see
// Failed): projections may take an Archetype without importing anything of
// the actors (see docs/architecture.md and
// docs/decisions/0009-clock-and-lifecycle.md).
//
// Concurrency: an Archetype is a value; its clock and logger are safe for
// concurrent use.
package archetype

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/events"
)

// Archetype is the clock and logger a component uses. The zero value is
// ready to use through WithDefaults: the wall clock and a logger that
// discards.
type Archetype struct {
	// Clock is the only source of time. Nil: clock.Real.
	Clock clock.Clock
	// Logger receives operational logs, with snake_case keys. Nil: discard.
	Logger *slog.Logger
}

// WithDefaults fills what is unset.
func (a Archetype) WithDefaults() Archetype {
	if a.Clock == nil {
		a.Clock = clock.Real{}
	}
	if a.Logger == nil {
		a.Logger = slog.New(slog.DiscardHandler)
	}
	return a
}

// Now reads the clock (the wall clock when unset).
func (a Archetype) Now() time.Time {
	if a.Clock == nil {
		return clock.Real{}.Now()
	}
	return a.Clock.Now()
}

// Failed logs that something failed with err: msg at level, with attrs and
// err under "err". Every failure of the actors to record a decision (a
// tick, a forced end, a start, an outcome) goes through it. A store that
// refuses appends for a condition of its own (events.ErrUnwritable: its
// disk is full or read-only, or a write failed) is not logged here: the
// store logs the condition once when it begins and once when it ends, with
// the count of appends refused meanwhile, where logging each refusal would
// write a line per due task per tick.
func (a Archetype) Failed(level slog.Level, msg string, err error, attrs ...any) {
	if errors.Is(err, events.ErrUnwritable) {
		return
	}
	logger := a.Logger
	if logger == nil {
		return
	}
	logger.Log(context.Background(), level, msg, append(attrs, "err", err)...)
}
