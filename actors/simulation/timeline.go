package simulation

import (
	"fmt"
	"sort"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Epoch is the virtual time a simulation starts at ("00:00") unless its
// scenario gives a start.
var Epoch = time.Date(2026, time.January, 5, 0, 0, 0, 0, time.UTC)

// Entry is one line of a simulation's timeline: a recorded event of a task,
// or a tick that enqueued nothing for it (Tick). A tick's Record is zero,
// or the SlotsMissed event it recorded: under missed_run_policy skip (R14)
// a tick that finds the slot missed enqueues nothing and moves nextRun on,
// and the published lines show that as a tick, not as an event of its own.
type Entry struct {
	At time.Time
	// Task is the task's place in the scenario; TaskID its ID.
	Task   int
	TaskID uuid.UUID
	Tick   bool
	Record events.Recorded
}

// lifecycle events are those a scenario's script causes directly; a tick at
// the same instant is placed after them (the script acts first).
var lifecycle = map[string]bool{"TaskCreated": true, "TaskUpdated": true, "TaskPaused": true, "TaskResumed": true, "TaskDeleted": true}

// slotsMissed is the event of a tick that skipped a missed slot (R14); its
// line is the tick's.
const slotsMissed = "SlotsMissed"

// timeline orders the recorded events of the tasks and the tick rows into
// the canonical order: time, then the task's place in the scenario, then
// the task's own order. streams[i] holds task i's events in stream order;
// ticks are the times the clock ticked. A tick yields a row for every task
// alive at it (created, not deleted) that it did not enqueue a run for,
// placed before the task's first run event at that instant; a tick that
// recorded SlotsMissed is that event, as a tick entry.
func timeline(ids []uuid.UUID, streams [][]events.Recorded, ticks []time.Time) ([]Entry, error) {
	type keyed struct {
		Entry
		seq int
	}
	var all []keyed
	for ti, recs := range streams {
		var list []Entry
		for i, r := range recs {
			if i > 0 && r.At.Before(recs[i-1].At) {
				return nil, fmt.Errorf("simulation: task %d: event %d (%s) at %s recorded after one at %s", ti, i, r.Type, r.At, recs[i-1].At)
			}
		}
		k := 0 // next record to place
		for _, tk := range ticks {
			for k < len(recs) && (recs[k].At.Before(tk) || (recs[k].At.Equal(tk) && lifecycle[recs[k].Type])) {
				list = append(list, Entry{At: recs[k].At, Task: ti, TaskID: ids[ti], Record: recs[k]})
				k++
			}
			if !alive(list) {
				continue
			}
			enqueued := false
			for j := k; j < len(recs) && recs[j].At.Equal(tk); j++ {
				enqueued = enqueued || recs[j].Type == "RunEnqueued" || recs[j].Type == slotsMissed
			}
			if !enqueued {
				list = append(list, Entry{At: tk, Task: ti, TaskID: ids[ti], Tick: true})
			}
		}
		for ; k < len(recs); k++ {
			list = append(list, Entry{At: recs[k].At, Task: ti, TaskID: ids[ti], Record: recs[k]})
		}
		for i, e := range list {
			e.Tick = e.Tick || e.Record.Type == slotsMissed
			all = append(all, keyed{e, i})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if !a.At.Equal(b.At) {
			return a.At.Before(b.At)
		}
		if a.Task != b.Task {
			return a.Task < b.Task
		}
		return a.seq < b.seq
	})
	out := make([]Entry, len(all))
	for i, k := range all {
		out[i] = k.Entry
	}
	return out, nil
}

// alive says the task of list was created, and is neither deleted nor
// finished (R10: a finished task's ticks enqueue nothing, by rule).
func alive(list []Entry) bool {
	live := false
	for _, e := range list {
		switch e.Record.Type {
		case "TaskCreated", "TaskUpdated":
			live = e.Record.Type == "TaskCreated" || live
		case "TaskDeleted", "TaskFinished":
			live = false
		}
	}
	return live
}
