package scheduler

import (
	"bytes"
	"context"
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
		if !sameSpec(t, spec) {
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

// Tasks returns every task not deleted, ordered by owner then name.
// Deleted tasks are in the log and the cron_tasks view.
func (s *Scheduler) Tasks(ctx context.Context) ([]Task, error) {
	s.ownersMu.Lock()
	var ids []uuid.UUID
	for _, m := range s.owners {
		for id := range m {
			ids = append(ids, id)
		}
	}
	s.ownersMu.Unlock()
	out := make([]Task, 0, len(ids))
	for _, id := range ids {
		t, err := s.Task(ctx, id)
		if errors.Is(err, ErrTaskNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if t.Status == rules.StatusDeleted.String() {
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Owner != out[j].Owner {
			return out[i].Owner < out[j].Owner
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
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
