package scheduler

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// WriteOption qualifies a write to a task (UpdateTask, PauseTask,
// ResumeTask, DeleteTask).
type WriteOption func(*writeOptions)

type writeOptions struct{ ifVersion *uint64 }

// IfVersion makes a write apply only if the task is at version v (its
// Task.Version, the HTTP ETag), decided by the task's actor against its
// current state; otherwise the write records nothing and fails with a
// *VersionMismatchError.
func IfVersion(v uint64) WriteOption { return func(o *writeOptions) { o.ifVersion = &v } }

func writeOpts(opts []WriteOption) writeOptions {
	var o writeOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// CreateTask creates a task, or returns the existing one with that owner and
// name (created false) when spec is the same as its (R6: the fields spec
// sets; one it leaves zero takes the existing task's). When the spec
// differs, nothing is recorded and it returns the existing task with a
// *SpecConflictError (errors.Is ErrSpecConflict); change a task with
// UpdateTask. Creating a task that was
// deleted creates it again on the same stream as a new incarnation that
// starts clean (no lastRun, no checkpoint); run numbers go on, and runs of
// the old incarnation never start under the new one (see package
// events/taskstate).
func (s *Scheduler) CreateTask(ctx context.Context, spec TaskSpec) (Task, bool, error) {
	spec, err := spec.flatSchedule()
	if err != nil {
		return Task{}, false, err
	}
	if _, ok := s.handlers[spec.Kind]; !ok && spec.Kind != "" {
		return Task{}, false, &FieldError{Field: "kind", Message: fmt.Sprintf("no handler registered for kind %q; the kinds registered are %s",
			spec.Kind, strings.Join(s.Kinds(), ", "))}
	}
	now := s.cfg.Clock.Now()
	first := spec.FirstRun
	if first.IsZero() && len(spec.Cron) == 0 && len(spec.At) == 0 {
		first = now.Add(spec.Interval)
	}
	id := TaskID(spec.Owner, spec.Name)
	cmd := rules.Create{TaskID: id, FirstRun: first, Spec: spec.rulesSpec()}
	// Validate before spawning anything for a bad spec: the schedule
	// compiles, has a slot after now, and the defaults fit it.
	if _, err := rules.Prepare(cmd.Spec, now); err != nil {
		return Task{}, false, err
	}
	if err := s.checkPayload(spec.Kind, spec.Payload); err != nil {
		return Task{}, false, err
	}
	reply, err := s.ask(ctx, id, cmd)
	if errors.Is(err, rules.ErrAlreadyExists) {
		t := taskFrom(reply.State, reply.Position)
		if !sameAsTask(t, spec) {
			return t, false, &SpecConflictError{ID: t.ID, Owner: t.Owner, Name: t.Name}
		}
		return t, false, nil
	}
	if err != nil {
		return Task{}, false, err
	}
	// The owners' index has it already: the actor listed it (Listed).
	return taskFrom(reply.State, reply.Position), true, nil
}

func (s *Scheduler) command(ctx context.Context, id uuid.UUID, cmd rules.Command) (Task, error) {
	reply, err := s.ask(ctx, id, cmd)
	if err != nil {
		return taskFrom(reply.State, reply.Position), err
	}
	return taskFrom(reply.State, reply.Position), nil
}

// Task returns a task's current state.
func (s *Scheduler) Task(ctx context.Context, id uuid.UUID) (Task, error) {
	reply, err := s.send(ctx, id, task.Get{})
	if err != nil {
		return Task{}, err
	}
	if reply.Err != nil {
		return Task{}, reply.Err
	}
	if !reply.State.Exists() {
		return Task{}, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return taskFrom(reply.State, reply.Position), nil
}

// Tasks returns every task not deleted, ordered by owner then name: every
// page of TasksPage, in one slice. Deleted tasks are in the log and the
// cron_tasks view. For many tasks, page with TasksPage instead.
func (s *Scheduler) Tasks(ctx context.Context) ([]Task, error) {
	var out []Task
	q := TaskQuery{Limit: MaxTaskPage}
	for {
		p, err := s.TasksPage(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Tasks...)
		if p.Next == "" {
			return out, nil
		}
		q.After = p.Next
	}
}

// DefaultTaskPage and MaxTaskPage are TaskQuery.Limit's default and bound.
const (
	DefaultTaskPage = 100
	MaxTaskPage     = 1000
)

// TaskQuery selects a page of TasksPage.
type TaskQuery struct {
	// Owner, if set, keeps that owner's tasks only.
	Owner string
	// After is the Next of the page before; "" for the first page.
	After string
	// Limit is the most tasks in the page: default DefaultTaskPage,
	// 1–MaxTaskPage.
	Limit int
}

// TaskPage is a page of tasks, ordered by owner then name.
type TaskPage struct {
	Tasks []Task
	// Next is the TaskQuery.After of the next page; "" on the last page.
	Next string
}

// TasksPage returns a page of the tasks not deleted, ordered by owner then
// name, from the scheduler's memory: a task that rests is read from its
// record, with no call into an actor; only a task with an actor in memory
// (an open run, a call under way, a pin) asks it, as Task does. The pages
// of one listing are each as the tasks stood when it was read: a task
// created or deleted between two pages may be missed or listed once more
// at the edge, never twice in one page. The cursor (Next) is opaque.
func (s *Scheduler) TasksPage(ctx context.Context, q TaskQuery) (TaskPage, error) {
	if q.Limit == 0 {
		q.Limit = DefaultTaskPage
	}
	if q.Limit < 1 || q.Limit > MaxTaskPage {
		return TaskPage{}, &FieldError{Field: "limit", Message: fmt.Sprintf("must be between 1 and %d, got %d", MaxTaskPage, q.Limit)}
	}
	after, err := parseTaskCursor(q.After)
	if err != nil {
		return TaskPage{}, err
	}
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if !started {
		return TaskPage{}, ErrNotStarted
	}
	keys := s.listed(q.Owner, after)
	more := len(keys) > q.Limit
	if more {
		keys = keys[:q.Limit]
	}
	page := TaskPage{Tasks: make([]Task, 0, len(keys))}
	for _, k := range keys {
		t, ok, err := s.listedTask(ctx, k.id)
		if err != nil {
			return TaskPage{}, err
		}
		if ok {
			page.Tasks = append(page.Tasks, t)
		}
	}
	if more {
		page.Next = taskCursor(keys[len(keys)-1])
	}
	return page, nil
}

// listedKey is a task of the owners' index, in the order of a listing.
type listedKey struct {
	owner, name string
	id          uuid.UUID
}

func (a listedKey) less(b listedKey) bool {
	if a.owner != b.owner {
		return a.owner < b.owner
	}
	return a.name < b.name
}

// listed is the owners' index after after (nil: from the start), in the
// order of a listing, owner's tasks only when owner is set. It copies and
// sorts the index on each call, O(n log n) for n tasks listed: a page of a
// million tasks' listing costs about a second; the cron_tasks view pages
// large listings from disk.
func (s *Scheduler) listed(owner string, after *listedKey) []listedKey {
	var keys []listedKey
	add := func(o string, m map[uuid.UUID]string) {
		for id, name := range m {
			k := listedKey{o, name, id}
			if after == nil || after.less(k) {
				keys = append(keys, k)
			}
		}
	}
	s.ownersMu.Lock()
	if owner != "" {
		add(owner, s.owners[owner])
	} else {
		for o, m := range s.owners {
			add(o, m)
		}
	}
	s.ownersMu.Unlock()
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	return keys
}

// listedTask is task id as a listing shows it: from its record when it
// rests, else from its actor; ok false when it is deleted by now.
func (s *Scheduler) listedTask(ctx context.Context, id uuid.UUID) (Task, bool, error) {
	s.mu.Lock()
	rec := s.tasks[id].rec
	s.mu.Unlock()
	var t Task
	if rec != "" {
		var st rules.State
		var pos events.Position
		if err := readRecordInto(rec, &st, &pos); err != nil {
			return Task{}, false, err
		}
		t = taskFrom(st, pos)
	} else {
		var err error
		if t, err = s.Task(ctx, id); errors.Is(err, ErrTaskNotFound) {
			return Task{}, false, nil
		} else if err != nil {
			return Task{}, false, err
		}
	}
	return t, t.Status != rules.StatusDeleted.String(), nil
}

// taskCursor and parseTaskCursor write and read TaskPage.Next: the owner
// and name of the page's last task.
func taskCursor(k listedKey) string {
	return base64.RawURLEncoding.EncodeToString([]byte(k.owner + "\x00" + k.name))
}

func parseTaskCursor(c string) (*listedKey, error) {
	if c == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	owner, name, ok := strings.Cut(string(b), "\x00")
	if err != nil || !ok {
		return nil, &FieldError{Field: "after", Message: "is not a cursor TasksPage returned"}
	}
	return &listedKey{owner: owner, name: name}, nil
}

// UpdateTask changes the fields u sets; the task's actor decides it against
// its current state. An update that changes nothing records nothing.
func (s *Scheduler) UpdateTask(ctx context.Context, id uuid.UUID, u TaskUpdate, opts ...WriteOption) (Task, error) {
	c, err := u.command()
	if err != nil {
		return Task{}, err
	}
	c.IfVersion = writeOpts(opts).ifVersion
	if c.PayloadKind, err = s.checkUpdatePayload(ctx, id, u); err != nil {
		return Task{}, err
	}
	return s.command(ctx, id, c)
}

// MaxUpcoming is the most slots Upcoming returns.
const MaxUpcoming = 1000

// Upcoming is a task's next n slots (at most MaxUpcoming) strictly after
// now, in the task's zone (UTC for an interval task): where its schedule
// and window put them, capped by the runs max_runs leaves and without
// jitter. The slot the task is due at but has not enqueued yet comes first.
// A finished or deleted task has none.
func (s *Scheduler) Upcoming(ctx context.Context, id uuid.UUID, n int) ([]time.Time, error) {
	if n < 1 || n > MaxUpcoming {
		return nil, &FieldError{Field: "count", Message: fmt.Sprintf("must be between 1 and %d, got %d", MaxUpcoming, n)}
	}
	reply, err := s.send(ctx, id, task.Get{})
	if err != nil {
		return nil, err
	}
	if reply.Err != nil {
		return nil, reply.Err
	}
	if !reply.State.Exists() {
		return nil, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return rules.Upcoming(reply.State, s.cfg.Clock.Now(), n)
}

// Trigger enqueues one run of task id now, outside its schedule (R15), and
// returns the run's ID. The run moves neither the task's nextRun nor its
// lastRun nor its count of scheduled runs (max_runs), is not held to R3's
// spacing, and is dropped as overlap if another run of the task is running
// when a worker takes it (R12). A task that is paused, finished, deleted
// or at its bound of waiting runs (R18) refuses it with an error matching
// ErrCannotTrigger whose text says which; an unknown task with
// ErrTaskNotFound.
func (s *Scheduler) Trigger(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	reply, err := s.ask(ctx, id, rules.Trigger{})
	if err != nil {
		return uuid.Nil, err
	}
	for _, e := range reply.Events {
		if en, ok := e.(events.RunEnqueued); ok {
			return en.RunID, nil
		}
	}
	return uuid.Nil, fmt.Errorf("scheduler: trigger of task %s recorded no run", id)
}

// PauseTask stops a task from enqueueing runs; its waiting runs are dropped
// when a worker asks for them (R7).
func (s *Scheduler) PauseTask(ctx context.Context, id uuid.UUID, opts ...WriteOption) (Task, error) {
	return s.command(ctx, id, rules.Pause{IfVersion: writeOpts(opts).ifVersion})
}

// ResumeTask lets a paused task run again.
func (s *Scheduler) ResumeTask(ctx context.Context, id uuid.UUID, opts ...WriteOption) (Task, error) {
	return s.command(ctx, id, rules.Resume{IfVersion: writeOpts(opts).ifVersion})
}

// DeleteTask deletes a task (R7). Its actor stops once the task has no open
// run; the task stays in the log and the view.
func (s *Scheduler) DeleteTask(ctx context.Context, id uuid.UUID, opts ...WriteOption) (Task, error) {
	return s.command(ctx, id, rules.Delete{Reason: "deleted", IfVersion: writeOpts(opts).ifVersion})
}

// OwnerDeletion is what DeleteOwner did.
type OwnerDeletion struct {
	// Deleted counts the tasks deleted.
	Deleted int
	// Position is the global log position of the last deletion recorded (zero
	// when none was): a view that has folded up to it shows them all.
	Position events.Position
}

// DeleteOwner deletes every task of an owner (R6), one after another in
// the order of their IDs, each decided by its own actor: it is not atomic.
// On an error (a store that fails, ctx ending) it stops there and returns
// the error with what it did so far: Deleted counts the tasks deleted
// before the one that failed and Position is the last of their deletions;
// the failed task and those after it are untouched (listed, not deleted).
// Calling it again deletes the rest: a deleted task leaves the owner's
// list, so a retry never deletes one twice.
func (s *Scheduler) DeleteOwner(ctx context.Context, owner string) (OwnerDeletion, error) {
	s.ownersMu.Lock()
	var ids []uuid.UUID
	for id := range s.owners[owner] {
		ids = append(ids, id)
	}
	s.ownersMu.Unlock()
	// The bytes in order sort as the IDs' text does (fixed-width lowercase
	// hex), without formatting two strings per comparison.
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	var d OwnerDeletion
	for _, id := range ids {
		t, err := s.command(ctx, id, rules.Delete{Reason: "owner " + owner + " deleted"})
		if err != nil {
			return d, err
		}
		d.Deleted++
		if d.Position.Less(t.Position) {
			d.Position = t.Position
		}
	}
	return d, nil
}
