// Package history turns a task's recorded events into its audit trail: one
// Row per event with the time it was decided, the run number and ID, the
// task's nextRun and lastRun after the event, and for drops and forced ends
// the reason with its numbers. Rows render as the table of the worked
// example in docs/lifecycle.md ("Cron enqueues A1", "A1 begins execution", …) with a
// pluggable time format (relative MM:SS or absolute RFC 3339), or as JSON
// lines. A timeline of several tasks (WriteTimelineWith) adds a Task column.
// Every duration in words is said by events.Span, one unit for one size
// ("57 s", "250 ms", "5.0 s", "1 d 1 h").
//
// A Tracker folds the events of one or more tasks; callers that drive a
// clock (the simulation) interleave their own Tick rows ("Cron executes")
// with Tracker.Tick, since a tick that enqueues nothing is not an event.
//
// Explain answers "why did (or didn't) this task run at time T?" from the
// same events: the decisions around T and the scheduling rule that applied.
//
// A Fold folds one stream and makes Marks: what the fold knows after an
// event. Folding on from a Mark (Fold.Resume, ExplainMark) gives the rows
// and the explanation the whole fold gives, so a reader of a long stream
// that keeps Marks (projections/audit) reads any part of it exactly at a
// bounded cost.
//
// EventJSON is the wire form of a recorded event used by the HTTP audit
// endpoint (GET /v1/tasks/{id}/events) and its clients.
//
// The package imports only the standard library and package events. Its
// functions are pure; a Tracker is not safe for concurrent use.
package history
