package scheduler

import (
	"slices"
	"time"
)

// Schedule is when a task falls due, as one value: Every, Cron or At, then
// the qualifiers that apply to it (In, OnDSTGap, OnDSTOverlap,
// WithTolerance). It is what TaskSpec.Schedule and TaskUpdate.Schedule
// take instead of the flat fields Interval, Cron, At, Timezone, DSTGap,
// DSTOverlap, Tolerance and ToleranceSet, which cannot say "exactly one
// kind" and in which a zero Tolerance means two things. The zero Schedule
// is no schedule.
//
//	scheduler.Every(time.Minute)
//	scheduler.Cron("0 9 * * MON-FRI").In("Europe/Berlin")
//	scheduler.At(launch)                         // a one-time task
//	scheduler.Every(10 * time.Second).WithTolerance(0)
type Schedule struct {
	kind                         string // "interval", "cron", "at"; "" for none
	every                        time.Duration
	cron                         []string
	at                           []time.Time
	timezone, dstGap, dstOverlap string
	tolerance                    *time.Duration
}

// Every is an interval schedule (R1): due every d, the first time d after
// the task is created.
func Every(d time.Duration) Schedule { return Schedule{kind: "interval", every: d} }

// Cron is a cron schedule: the slots of the expressions, united, read as
// wall-clock time in UTC unless In names a zone (docs/schedules.md).
func Cron(expr ...string) Schedule { return Schedule{kind: "cron", cron: slices.Clone(expr)} }

// At is a schedule of instants; one instant is a one-time task.
func At(t ...time.Time) Schedule { return Schedule{kind: "at", at: slices.Clone(t)} }

// In reads a cron schedule in the IANA zone timezone (default UTC); an at
// schedule's slots are shown in it.
func (s Schedule) In(timezone string) Schedule { s.timezone = timezone; return s }

// OnDSTGap says what a cron slot whose wall time does not exist does:
// "shift" (the default) or "skip".
func (s Schedule) OnDSTGap(policy string) Schedule { s.dstGap = policy; return s }

// OnDSTOverlap says what a cron slot whose wall time happens twice does:
// "first" (the default), "last" or "both".
func (s Schedule) OnDSTOverlap(policy string) Schedule { s.dstOverlap = policy; return s }

// WithTolerance sets R3's tolerance to d, zero included. Without it the
// tolerance is the default for the schedule: 5s, or a tenth of the
// spacing when smaller.
func (s Schedule) WithTolerance(d time.Duration) Schedule { s.tolerance = &d; return s }

// IsZero reports the zero Schedule: none given.
func (s Schedule) IsZero() bool { return s.kind == "" && s.tolerance == nil }

// Kind is "interval", "cron", "at", or "" for the zero Schedule.
func (s Schedule) Kind() string { return s.kind }

// check refuses a schedule kind given without what it needs.
func (s Schedule) check() error {
	switch {
	case s.kind == "" && s.tolerance != nil:
		return &FieldError{Field: "schedule", Message: "a tolerance needs a schedule: Every, Cron or At"}
	case s.kind == "cron" && len(s.cron) == 0:
		return &FieldError{Field: "cron", Message: "give at least one expression"}
	case s.kind == "at" && len(s.at) == 0:
		return &FieldError{Field: "at", Message: "give at least one instant"}
	}
	return nil
}

// Schedule is the task's schedule as a Schedule value, its tolerance
// included.
func (t Task) Schedule() Schedule {
	var s Schedule
	switch {
	case len(t.Cron) > 0:
		s = Cron(t.Cron...)
	case len(t.At) > 0:
		s = At(t.At...)
	default:
		s = Every(t.Interval)
	}
	s.timezone, s.dstGap, s.dstOverlap = t.Timezone, t.DSTGap, t.DSTOverlap
	return s.WithTolerance(t.Tolerance)
}

// flatSchedule is spec with its Schedule written into the flat fields the
// rules take; a spec that gives both is refused.
func (spec TaskSpec) flatSchedule() (TaskSpec, error) {
	sc := spec.Schedule
	if sc.IsZero() {
		return spec, nil
	}
	if err := sc.check(); err != nil {
		return spec, err
	}
	if spec.Interval != 0 || spec.Cron != nil || spec.At != nil || spec.Timezone != "" || spec.DSTGap != "" || spec.DSTOverlap != "" {
		return spec, &FieldError{Field: "schedule", Message: "give either Schedule or Interval, Cron, At, Timezone, DSTGap and DSTOverlap, not both"}
	}
	if sc.tolerance != nil && (spec.Tolerance != 0 || spec.ToleranceSet) {
		return spec, &FieldError{Field: "tolerance", Message: "give either Schedule's WithTolerance or Tolerance, not both"}
	}
	spec.Interval, spec.Cron, spec.At = sc.every, sc.cron, sc.at
	spec.Timezone, spec.DSTGap, spec.DSTOverlap = sc.timezone, sc.dstGap, sc.dstOverlap
	if sc.tolerance != nil {
		spec.Tolerance, spec.ToleranceSet = *sc.tolerance, true
	}
	spec.Schedule = Schedule{}
	return spec, nil
}

// flatSchedule is u with its Schedule written into the flat fields: the
// whole schedule as written is replaced (kind, zone, DST policies), and
// the tolerance when the Schedule carries one. An update that gives both
// is refused.
func (u TaskUpdate) flatSchedule() (TaskUpdate, error) {
	if u.Schedule == nil {
		return u, nil
	}
	sc := *u.Schedule
	if sc.kind == "" {
		return u, &FieldError{Field: "schedule", Message: "give Every, Cron or At"}
	}
	if err := sc.check(); err != nil {
		return u, err
	}
	if u.Interval != nil || u.Cron != nil || u.At != nil || u.Timezone != nil || u.DSTGap != nil || u.DSTOverlap != nil {
		return u, &FieldError{Field: "schedule", Message: "give either Schedule or Interval, Cron, At, Timezone, DSTGap and DSTOverlap, not both"}
	}
	if sc.tolerance != nil && u.Tolerance != nil {
		return u, &FieldError{Field: "tolerance", Message: "give either Schedule's WithTolerance or Tolerance, not both"}
	}
	if sc.kind == "interval" {
		u.Interval = &sc.every
	}
	u.Cron, u.At = sc.cron, sc.at
	u.Timezone, u.DSTGap, u.DSTOverlap = &sc.timezone, &sc.dstGap, &sc.dstOverlap
	if sc.tolerance != nil {
		tol := *sc.tolerance
		u.Tolerance = &tol
	}
	u.Schedule = nil
	return u, nil
}

// Equal reports whether two schedules say the same: kind, expressions or
// instants, zone, DST policies and tolerance.
func (s Schedule) Equal(o Schedule) bool {
	if (s.tolerance == nil) != (o.tolerance == nil) || (s.tolerance != nil && *s.tolerance != *o.tolerance) {
		return false
	}
	return s.kind == o.kind && s.every == o.every && slices.Equal(s.cron, o.cron) &&
		slices.EqualFunc(s.at, o.at, time.Time.Equal) &&
		s.timezone == o.timezone && s.dstGap == o.dstGap && s.dstOverlap == o.dstOverlap
}
