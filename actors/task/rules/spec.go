package rules

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
	"github.com/cronactor/cronactor/events"
)

// Limits of a spec.
const (
	MinInterval      = time.Second
	DefaultTolerance = 5 * time.Second
	MaxPayloadBytes  = 64 << 10
	// MaxWaitingLimit is the largest bound on a task's waiting runs (R18);
	// a spec's MaxWaiting is 0 (the default, events.DefaultMaxWaiting) or
	// 1..MaxWaitingLimit.
	MaxWaitingLimit = 1000
)

// Defaults fills a spec's zero Tolerance (unless ToleranceSet) and Timebox:
// tolerance 5 s, or a tenth of the interval when that is smaller (it must
// stay below half the interval); timebox half the interval.
func Defaults(s Spec) Spec {
	iv := s.Schedule.Interval.D()
	if s.Tolerance == 0 && !s.ToleranceSet {
		s.Tolerance = min(DefaultTolerance, iv/10)
	}
	if s.Timebox == 0 {
		s.Timebox = iv / 2
	}
	return s
}

// Prepare fills a spec's defaults as of now and checks it, for a create or
// a reschedule. An interval task takes Defaults. A cron or at task (R11)
// takes tolerance 5 s, or a tenth of the shortest spacing among its next
// 1,000 slots when that is smaller, and timebox half that spacing (1 h when
// a single slot is left); its schedule must compile and have a slot
// strictly after now. Errors are *FieldError.
func Prepare(s Spec, now time.Time) (Spec, error) { return prepare(s, now, Validate) }

// prepare is Prepare with the check to run on the spec: Validate for a
// create, validateSpec for an update (which cannot change name or owner).
func prepare(s Spec, now time.Time, validate func(Spec) error) (Spec, error) {
	if s.Schedule.IsInterval() {
		s = Defaults(s)
		return s, validate(s)
	}
	if err := validateSchedule(s); err != nil {
		return s, err
	}
	c, err := Compiled(s)
	if err != nil {
		return s, err
	}
	if err := c.Live(now); err != nil {
		return s, fieldError(err)
	}
	shortest := shortestSpacing(c, now)
	if s.Tolerance == 0 && !s.ToleranceSet {
		s.Tolerance = schedule.DefaultTolerance(shortest)
	}
	if s.Timebox == 0 {
		s.Timebox = schedule.OnceTimebox
		if shortest > 0 {
			s.Timebox = shortest / 2
		}
	}
	if err := validate(s); err != nil {
		return s, err
	}
	switch {
	case shortest > 0 && atLeastHalf(s.Tolerance, shortest):
		return s, &FieldError{"tolerance", fmt.Sprintf("must be less than half the shortest spacing of the schedule (%s), got %s", shortest/2, s.Tolerance)}
	case shortest > 0 && s.Timebox > shortest:
		return s, &FieldError{"timebox", fmt.Sprintf("must not exceed the shortest spacing of the schedule (%s), got %s", shortest, s.Timebox)}
	}
	return s, nil
}

// validateSchedule checks what a spec's schedule and window say without
// compiling them: one kind, qualifiers only where they mean something.
func validateSchedule(s Spec) error {
	sc, w := s.Schedule, s.Window
	kinds := 0
	for _, set := range []bool{sc.Interval != 0, len(sc.Cron) > 0, len(sc.At) > 0} {
		if set {
			kinds++
		}
	}
	switch {
	case kinds > 1:
		return &FieldError{"schedule", "give exactly one of interval, cron and at"}
	case sc.IsInterval() && sc.Timezone != "":
		return &FieldError{"timezone", "applies to cron and at schedules, not to an interval"}
	case len(sc.Cron) == 0 && sc.DSTGap != "":
		return &FieldError{"dst_gap", "applies to cron schedules only"}
	case len(sc.Cron) == 0 && sc.DSTOverlap != "":
		return &FieldError{"dst_overlap", "applies to cron schedules only"}
	case len(sc.Cron) == 0 && len(sc.Exclude) > 0:
		return &FieldError{"exclude", "applies to cron schedules only"}
	case w.MaxRuns < 0:
		return &FieldError{"max_runs", fmt.Sprintf("must not be negative (0: no limit), got %d", w.MaxRuns)}
	case w.Jitter < 0:
		return &FieldError{"jitter", fmt.Sprintf("must not be negative, got %s", w.Jitter)}
	case !w.Start().IsZero() && !w.End().IsZero() && w.End().Before(w.Start()):
		return &FieldError{"end_at", "is before start_at"}
	}
	return nil
}

// Validate checks a spec after Defaults (an interval task) or Prepare.
// Errors are *FieldError. Names and owners follow TextProblem and
// MaxNameChars/MaxOwnerChars.
func Validate(s Spec) error {
	if err := validateIdentity(s); err != nil {
		return err
	}
	return validateSpec(s)
}

// validateSpec checks everything but the name and owner, which an update
// cannot change: a task recorded before the name rules were enforced can
// still be updated.
func validateSpec(s Spec) error {
	iv := s.Schedule.Interval.D()
	interval := s.Schedule.IsInterval()
	switch {
	case s.Kind == "":
		return &FieldError{"kind", "is required"}
	}
	if err := validateSchedule(s); err != nil {
		return err
	}
	switch {
	case interval && iv < MinInterval:
		return &FieldError{"interval", fmt.Sprintf("must be at least %s, got %s", MinInterval, iv)}
	case s.Tolerance < 0:
		return &FieldError{"tolerance", fmt.Sprintf("must not be negative, got %s", s.Tolerance)}
	case interval && atLeastHalf(s.Tolerance, iv):
		return &FieldError{"tolerance", fmt.Sprintf("must be less than half the interval (%s), got %s", iv/2, s.Tolerance)}
	case s.Timebox <= 0:
		return &FieldError{"timebox", fmt.Sprintf("must be positive, got %s", s.Timebox)}
	case interval && s.Timebox > iv:
		return &FieldError{"timebox", fmt.Sprintf("must not exceed the interval (%s), got %s", iv, s.Timebox)}
	case len(s.Payload) > MaxPayloadBytes:
		return &FieldError{"payload", fmt.Sprintf("must be at most %d bytes, got %d", MaxPayloadBytes, len(s.Payload))}
	case len(s.Payload) > 0 && !json.Valid(s.Payload):
		return &FieldError{"payload", "must be valid JSON"}
	}
	if err := validateMaxWaiting(s.MaxWaiting); err != nil {
		return err
	}
	if s.HistoryRetention < 0 {
		return &FieldError{"history_retention", fmt.Sprintf("must not be negative, got %s", s.HistoryRetention)}
	}
	return validatePolicy(s)
}

// validateMaxWaiting checks R18's bound: 0 (the default) or 1..MaxWaitingLimit.
func validateMaxWaiting(n int) error {
	if n < 0 || n > MaxWaitingLimit {
		return &FieldError{"max_waiting", fmt.Sprintf("must be between 1 and %d (0: the default, %d), got %d", MaxWaitingLimit, events.DefaultMaxWaiting, n)}
	}
	return nil
}
