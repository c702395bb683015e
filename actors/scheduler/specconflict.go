package scheduler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// SpecConflictError says which task a CreateTask conflicts with (R6: the
// same owner, name and spec is the same task; the same owner and name with
// another spec is a mistake, not an update). It matches ErrSpecConflict;
// nothing was recorded, and CreateTask returns the existing task with it.
type SpecConflictError struct {
	ID          uuid.UUID
	Owner, Name string
}

func (e *SpecConflictError) Error() string {
	return fmt.Sprintf("scheduler: owner %q already has a task named %q with a different spec (id %s)", e.Owner, e.Name, e.ID)
}

// Is makes a *SpecConflictError match ErrSpecConflict.
func (e *SpecConflictError) Is(target error) bool { return target == ErrSpecConflict }

// sameAsTask compares an existing task with a create request (R6: same
// owner+name and same spec is the same task).
func sameAsTask(t Task, s TaskSpec) bool {
	if t.Kind != s.Kind || t.Interval != s.Interval || t.Priority != s.Priority {
		return false
	}
	if !slices.Equal(t.Cron, s.Cron) || !slices.EqualFunc(t.At, s.At, time.Time.Equal) || t.MaxRuns != s.MaxRuns ||
		t.Jitter != s.Jitter || !t.StartAt.Equal(s.StartAt) || !t.EndAt.Equal(s.EndAt) ||
		t.Timezone != s.Timezone || t.DSTGap != s.DSTGap || t.DSTOverlap != s.DSTOverlap || !slices.Equal(t.Exclude, s.Exclude) {
		return false
	}
	if (s.ToleranceSet || s.Tolerance != 0) && t.Tolerance != s.Tolerance {
		return false
	}
	if s.Timebox != 0 && t.Timebox != s.Timebox {
		return false
	}
	if s.MaxWaiting != 0 && t.MaxWaiting != s.MaxWaiting {
		return false
	}
	if s.HistoryRetention != 0 && t.HistoryRetention != s.HistoryRetention {
		return false
	}
	if !samePolicy(t, s) {
		return false
	}
	return jsonEqual(t.Payload, s.Payload)
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// samePolicy compares an existing task's policy with the fields a create
// request gives (R6: the same owner+name and spec is the same task).
func samePolicy(t Task, s TaskSpec) bool {
	if s.Queue != "" && t.Queue != s.Queue {
		return false
	}
	if s.MissedRunPolicy != "" && or(t.MissedRunPolicy, "run_once") != s.MissedRunPolicy {
		return false
	}
	if s.Overlap != "" && or(t.Overlap, "skip") != s.Overlap {
		return false
	}
	if s.PauseAfterFailures != 0 && t.PauseAfterFailures != s.PauseAfterFailures {
		return false
	}
	if s.Retry != nil && !sameRetry(t.Retry, s.Retry) {
		return false
	}
	for _, d := range [][2]time.Duration{{s.MissedAfter, t.MissedAfter}, {s.StartDeadline, t.StartDeadline}, {s.HeartbeatTimeout, t.HeartbeatTimeout}} {
		if d[0] != 0 && d[0] != d[1] {
			return false
		}
	}
	return true
}

// sameRetry compares retry policies; one attempt is no retry.
func sameRetry(a, b *RetryPolicy) bool {
	none := func(r *RetryPolicy) bool { return r == nil || r.MaxAttempts <= 1 }
	if none(a) || none(b) {
		return none(a) && none(b)
	}
	return *a == *b
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
