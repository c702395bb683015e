// Package history turns a task's recorded events into its audit trail: one
// row per decision, with the time it was decided, the run it concerns, the
// task's nextRun and lastRun after it, and for drops and forced ends the
// reason with its numbers. It renders the rows as the table of the design's
// worked example ("Cron enqueues A1", "A1 begins execution", …) and defines
// the JSON form in which the HTTP API serves a task's events.
//
// The rows are folded from the events alone: every event body carries the
// values after the decision (RunEnqueued.NextRun, TaskResumed.NextRun, …) and
// RunStarted's time is the new lastRun.
//
// A Tracker is not safe for concurrent use; the functions are.
package history
