package rules

import (
	"time"

	"github.com/cronactor/cronactor/events"
)

// Compact records a TaskCompacted event that carries the task's state as
// it is (DESIGN §8.3, history retention): every event before it may be
// removed from the stream once the last of them is older than Retention
// (see Retain). It is decided like any command, so it lands right after the
// state it carries.
type Compact struct {
	// Retention is the task's retention in force (recorded on the event).
	Retention time.Duration
}

func (Compact) command() {}

// decideCompact carries s: the events it covers are the stream's versions
// 0 through s.Version (some of them may be removed already).
func decideCompact(s State, c Compact) ([]events.Event, error) {
	b, err := s.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return []events.Event{events.TaskCompacted{State: b, Events: int(s.Version) + 1, FromVersion: 0,
		ToVersion: s.Version, FromAt: s.FirstAt, ToAt: s.UpdatedAt, Retention: events.Duration(c.Retention)}}, nil
}

// RetentionOf is the retention in force for a task: its own, else def
// (the scheduler's default); zero keeps everything.
func RetentionOf(s *State, def time.Duration) time.Duration {
	if s.Spec.HistoryRetention > 0 {
		return s.Spec.HistoryRetention
	}
	return def
}

// Retain says what history retention asks of a task at now, with
// retention r in force (zero: nothing). It is cheap (a few comparisons),
// so the actor asks after each append it applies.
//
// One TaskCompacted at a time: the first is recorded once the stream's
// first event is older than r; the events before the latest one may be
// removed (truncateBefore, non-zero) once the last of them is older than
// r, and then, if the task recorded anything since, the next one is
// recorded (compact). So an event is kept at least r, and is removed by
// about 2 × r after it was decided (plus the time until the task next
// records something): the events after a TaskCompacted wait for the next
// one, which comes r after it.
func Retain(s *State, r time.Duration, now time.Time) (truncateBefore uint64, compact bool) {
	if r <= 0 || !s.Exists() {
		return 0, false
	}
	cutoff := now.Add(-r)
	if s.Compacted == 0 {
		first := s.FirstAt
		if first.IsZero() { // a state recorded before retention existed
			first = s.CreatedAt
		}
		return 0, !first.IsZero() && first.Before(cutoff)
	}
	if !s.CompactedThrough.Before(cutoff) {
		return 0, false
	}
	return s.Compacted, s.Version > s.Compacted
}
