package rules

import (
	"time"

	"github.com/cronactor/cronactor/events"
)

// Schedule says when a task falls due next. New kinds (cron expressions,
// one-time, date lists) implement it and Compile learns to build them; the
// actors only ever call Next and Missed.
type Schedule interface {
	// Next is the first due time after a tick at t (R1: the tick time, not
	// the old due time, so missed slots merge into one run).
	Next(t time.Time) time.Time
	// Missed counts the due times skipped between due and t (R8).
	Missed(due, t time.Time) int
}

// Every is an interval schedule.
type Every time.Duration

// Next implements Schedule.
func (e Every) Next(t time.Time) time.Time { return t.Add(time.Duration(e)) }

// Missed implements Schedule: whole intervals between due and t.
func (e Every) Missed(due, t time.Time) int {
	if e <= 0 || !t.After(due) {
		return 0
	}
	return int(t.Sub(due) / time.Duration(e))
}

// Compile turns the stored schedule into its Schedule.
func Compile(s events.Schedule) Schedule { return Every(s.Interval) }
