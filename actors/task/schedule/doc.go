// Package schedule turns a task's schedule — cron expressions read in a time
// zone under a daylight-saving policy, or a list of instants — into slots:
// the instants at which a run is due (docs/schedules.md).
//
// Everything here is pure: no clock reads, no randomness, no I/O. Time is
// always an argument, so the task's decisions can call it and replay to the
// same answer. A compiled [Schedule] is immutable and safe for concurrent use.
//
// Slots are computed from the zone's own transitions (found with
// time.Time.ZoneBounds), never from time.Date's normalization of a wall time
// that does not exist or exists twice, which differs from zone to zone:
//
//   - a wall time inside a gap (clocks jump forward) fires, under
//     [GapShift], as far after the gap as it was into it — the wall time read
//     with the offset in force before the change — and not at all under
//     [GapSkip];
//   - a wall time inside an overlap (clocks go back) fires at its first
//     instant ([OverlapFirst]), its second ([OverlapLast]) or both
//     ([OverlapBoth]).
//
// Slots are de-duplicated: a shifted wall time that lands on another slot,
// or two expressions of one list matching the same instant, is one slot.
//
// Besides values, ranges, lists and steps, the day fields take the forms
// that depend on the month — L, L-n, nW and LW in day-of-month, d#n and dL
// in day-of-week — evaluated on the zone's calendar; which days of a month
// match depends only on its length and the weekday of its 1st, so they
// compile to a mask per month. [Spec.Exclude] takes dates and expressions
// out of the wall times before the DST policies apply, and
// [Schedule.Note] says in words what a policy did to a slot.
//
// Every search is bounded: [Schedule.Next] looks at most [Horizon] ahead and
// answers the zero time when no slot is left, so it terminates for every
// input.
package schedule
