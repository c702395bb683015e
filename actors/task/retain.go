package task

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
)

// History retention (DESIGN §8.3, docs/decisions/0023-retention.md). After
// each append it applies, the actor asks rules.Retain what the task's
// retention calls for — a few comparisons, nothing read — and:
//
//   - to remove the events before the latest TaskCompacted, hands
//     events.Truncater.TruncateBefore to a goroutine of its own, within
//     StoreTimeout, counted on the clock until it returns (a virtual clock
//     does not move meanwhile); a failure is logged at WARN and the removal
//     is asked again with the next TaskCompacted, which covers it;
//   - to record a new TaskCompacted, sends itself a compactNow message,
//     decided (rules.Compact) and appended like any command once the
//     messages before it are handled.
//
// Nothing of it runs on the hot path beyond the comparisons, and nothing
// waits on the dispatcher's goroutines.

// compactNow asks the actor to record a TaskCompacted if retention still
// calls for one.
type compactNow struct{}

// retention is the task's retention in force and the store's Truncater;
// zero when either is missing.
func (a *Actor) retention() (time.Duration, events.Truncater) {
	tr, ok := a.cfg.Store.(events.Truncater)
	if !ok {
		return 0, nil
	}
	return rules.RetentionOf(&a.state, a.cfg.HistoryRetention), tr
}

// retain does what retention calls for at now (see above).
func (a *Actor) retain(now time.Time) {
	r, tr := a.retention()
	if r <= 0 {
		return
	}
	before, compact := rules.Retain(&a.state, r, now)
	if before > a.truncated {
		a.truncated = before
		a.truncate(tr, before)
	}
	if compact && !a.compacting && a.sys != nil {
		a.compacting = true
		counted.Send(a.cfg.Archetype.Clock, a.sys.Root, a.self, compactNow{})
	}
}

// truncate removes the task's events before version before, off the
// actor's goroutine.
func (a *Actor) truncate(tr events.Truncater, before uint64) {
	c := a.cfg.Archetype.Clock
	c.Begin()
	logger, id, stream, timeout := a.cfg.Archetype.Logger, a.id, a.stream, a.cfg.StoreTimeout
	go func() {
		defer c.End()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := tr.TruncateBefore(ctx, stream, before); err != nil {
			logger.Warn("history truncation failed", "task_id", id, "stream", stream, "version", before, "err", err)
			return
		}
		logger.Debug("history truncated", "task_id", id, "stream", stream, "version", before)
	}()
}

// compact records a TaskCompacted if retention still calls for one.
func (a *Actor) compact(ctx actor.Context) {
	a.compacting = false
	if !a.ensureLoaded(ctx) {
		return
	}
	r, _ := a.retention()
	now := a.cfg.Archetype.Clock.Now()
	if _, ok := rules.Retain(&a.state, r, now); !ok || r <= 0 {
		return
	}
	a.execute(ctx, a.newFlight(afterCompact, rules.Compact{Retention: r}, context.Background(), now))
}
