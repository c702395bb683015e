// Package archetype is the bundle every component of cronactor is built
// with: the clock it reads time and sets timers from, and the logger it
// writes to. One Archetype is made by whoever wires the components (the
// daemon in cmd/, the simulation, a test) and handed to each of them, so
// swapping the clock or the logger swaps it everywhere at once — the idea
// of River's baseservice.Archetype.
//
// It imports only the standard library and package clock, which imports
// only the standard library: projections may take an Archetype without
// importing anything of the actors (see docs/architecture.md and
// docs/decisions/0009-clock-and-lifecycle.md).
//
// Concurrency: an Archetype is a value; its clock and logger are safe for
// concurrent use.
package archetype

import (
	"log/slog"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
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
