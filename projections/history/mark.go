package history

import (
	"fmt"
	"maps"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/google/uuid"
)

// A Mark is everything the fold of one task stream knows after one of its
// events: the task's state (the one fold, events/taskstate) and what its
// rows and explanations add to it — the numbers of the runs later rows
// may name, and the explanation's own running state (status and since
// when, the runs in flight, the backoffs of pending retries). Folding the
// events after a Mark's version from the Mark (Fold.Resume, ExplainMark)
// gives exactly the rows and the explanation the fold of the whole stream
// gives: a reader of a long stream that keeps Marks every few thousand
// events (projections/audit) pages any depth of it at a bounded cost.
//
// A Mark is a value: Fold.Mark copies what it holds, and nothing that
// resumes from it changes it. Safe for concurrent reads.
type Mark struct {
	// Version and ID are the stream version and the ID of the last event
	// folded: a reader checks the ID before it resumes, so a Mark is never
	// used with a stream it was not made from.
	Version uint64
	ID      uuid.UUID

	task    uuid.UUID
	state   taskstate.State
	numbers map[uuid.UUID]int
	ex      exState
	// first is the task's name after the stream's first event: an
	// explanation names the task as its first row does.
	first string
}

// State is the task's state at the Mark (the fold of the stream through
// its version).
func (m *Mark) State() taskstate.State { return m.state }

// exState is what an explanation has folded of the rows at or before the
// time it explains.
type exState struct {
	exists          bool
	status          string
	since           time.Time
	nextRun         *time.Time
	lastRun         *time.Time
	maxWaiting      int
	queued, running map[int]RunState
	// backoff maps a failed run to the backoff its failure chose.
	backoff map[uuid.UUID]time.Duration
}

func (e *exState) init() {
	if e.queued == nil {
		e.queued = map[int]RunState{}
	}
	if e.running == nil {
		e.running = map[int]RunState{}
	}
	if e.backoff == nil {
		e.backoff = map[uuid.UUID]time.Duration{}
	}
}

// step folds a row at or before the explained time.
func (e *exState) step(r Row) {
	e.init()
	e.exists = true
	if r.Status != e.status {
		e.status, e.since = r.Status, r.At
	}
	e.nextRun, e.lastRun, e.maxWaiting = r.NextRun, r.LastRun, r.MaxWaiting
	switch r.Event {
	case "RunEnqueued":
		e.queued[r.Run] = RunState{Run: r.Run, RunID: r.RunID, Since: r.At, Attempt: r.Attempt, Trigger: r.Trigger}
	case "RunStarted":
		delete(e.queued, r.Run)
		e.running[r.Run] = RunState{Run: r.Run, RunID: r.RunID, Since: r.At, Deadline: r.Deadline, Attempt: r.Attempt, Trigger: r.Trigger}
	case "RunDropped":
		delete(e.queued, r.Run)
	case "RunCompleted", "RunFailed", "RunForcedEnd":
		delete(e.running, r.Run)
		if r.RetryAt != nil {
			e.backoff[r.RunID] = r.Backoff
		}
	}
}

// clone copies e, keeping of the backoffs only those of the failed runs
// in retries (the only ones an explanation reads).
// Empty maps are left nil (a Mark is kept for long: a map costs a few
// hundred bytes even empty); step makes them again.
func (e exState) clone(retries []taskstate.PendingRetry) exState {
	c := e
	c.queued, c.running, c.backoff = nil, nil, nil
	if len(e.queued) > 0 {
		c.queued = maps.Clone(e.queued)
	}
	if len(e.running) > 0 {
		c.running = maps.Clone(e.running)
	}
	for _, p := range retries {
		if b, ok := e.backoff[p.Of]; ok {
			if c.backoff == nil {
				c.backoff = map[uuid.UUID]time.Duration{}
			}
			c.backoff[p.Of] = b
		}
	}
	return c
}

// Fold folds the events of one task stream, in order, from its first event
// (TaskCreated, or the TaskCompacted it begins with once history retention
// removed the events before it) or from a Mark, into rows, and makes Marks.
// The zero value starts from the stream's first event.
type Fold struct {
	tr    Tracker
	task  uuid.UUID
	ex    exState
	first string
	last  events.Metadata
	n     int
}

// Resume makes f continue from m: the next event f is given must be the
// one after m's version.
func (f *Fold) Resume(m *Mark) {
	*f = Fold{task: m.task, first: m.first, last: events.Metadata{ID: m.ID, Version: m.Version}, n: 1}
	st := m.state
	f.tr.tasks = map[uuid.UUID]*taskstate.State{m.task: &st}
	f.tr.numbers = maps.Clone(m.numbers)
	if f.tr.numbers == nil {
		f.tr.numbers = map[uuid.UUID]int{}
	}
	f.ex = m.ex.clone(st.Retries)
}

// Apply folds the next event of the stream and returns its row.
func (f *Fold) Apply(r events.Recorded) (Row, error) {
	if f.n > 0 && r.Version != f.last.Version+1 {
		return Row{}, fmt.Errorf("history: %s@%d folded after version %d", r.Stream, r.Version, f.last.Version)
	}
	row, err := f.tr.Apply(r)
	if err != nil {
		return row, err
	}
	if f.n == 0 {
		f.task, f.first = row.TaskID, row.Task
	}
	f.n++
	f.last = r.Metadata
	f.ex.step(row)
	return row, nil
}

// Folded reports whether f has folded an event (or resumed from a Mark).
func (f *Fold) Folded() bool { return f.n > 0 }

// Mark is the Mark of what f has folded so far. f must have folded an
// event (or resumed from a Mark).
func (f *Fold) Mark() *Mark {
	st, _ := f.tr.State(f.task)
	m := &Mark{Version: f.last.Version, ID: f.last.ID, task: f.task, state: st, first: f.first, ex: f.ex.clone(st.Retries)}
	// The runs a later row may name by number: those still open, the runs
	// they retry, and the failed runs whose retry is still to come.
	keep := func(id uuid.UUID) {
		if n, ok := f.tr.numbers[id]; ok && id != uuid.Nil {
			if m.numbers == nil {
				m.numbers = map[uuid.UUID]int{}
			}
			m.numbers[id] = n
		}
	}
	for _, r := range st.Open {
		keep(r.ID)
		keep(r.RetryOf)
	}
	for _, p := range st.Retries {
		keep(p.Of)
	}
	return m
}
