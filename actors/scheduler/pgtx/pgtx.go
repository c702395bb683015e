// Package pgtx creates, updates and deletes cronactor tasks inside an
// embedder's own PostgreSQL transaction (River's InsertTx): the task's
// events are appended in the caller's pgx.Tx, so the task exists exactly
// when that transaction commits, and a scheduler on the same database
// (scheduler.Config.Follow, on by default for the Postgres store) picks it
// up from the log without a restart.
//
// Each write reads the task's stream in the transaction, decides with the
// same rules the task's actor uses (scheduler.DecideCreate, DecideUpdate,
// DecideDelete), and appends with the version it read
// (postgres.AppendTx), which takes the store's head row: from there until
// the transaction ends, every other append to the database waits. Make the
// write the last statement before Commit, and one write per transaction
// (a second fails with postgres.ErrTxAppended).
//
// A task's ID derives from its owner and name (scheduler.TaskID), so a
// create is idempotent: the same spec again returns the task as it is
// (created false, nothing written); another spec for the same owner and
// name fails with scheduler.ErrSpecConflict, and the caller rolls back.
// Under READ COMMITTED (PostgreSQL's default) a version conflict with a
// concurrent writer — the task's actor recording a run, say — is decided
// again against the stream as it now is, a bounded number of times.
//
// Concurrency: a Writer is safe for concurrent use; a pgx.Tx is not.
// docs/embedding.md ("Creating a task in your transaction") and
// docs/decisions/0026-insert-tx.md.
package pgtx

import (
	"context"
	"errors"
	"fmt"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// maxConflicts bounds how many times a write decided against a stream
// that changed meanwhile is decided again.
const maxConflicts = 5

// Writer writes tasks in a caller's transaction. The zero value works.
type Writer struct {
	// Scheduler, when set, checks a spec's kind and payload with its
	// registered handlers (as its CreateTask does), and its Clock is the
	// default clock. Without it kinds and payloads are not checked: the
	// process that runs the tasks must have their handlers.
	Scheduler *scheduler.Scheduler
	// Clock gives the time writes are decided at (a create's first run of
	// an interval task is now + interval). Default: the wall clock.
	Clock clock.Clock
}

func (w Writer) clock() clock.Clock {
	if w.Clock != nil {
		return w.Clock
	}
	return clock.Real{}
}

// CreateTask creates the task spec describes in tx, or returns the task
// with its owner and name as it stands when its spec is the same (created
// false, nothing written). Another spec fails with an error matching
// scheduler.ErrSpecConflict; a bad spec with a *scheduler.FieldError.
// Task.Position is the global position the task's last event has once tx
// commits (scheduler.WaitFollowed waits for a scheduler to have it).
func (w Writer) CreateTask(ctx context.Context, tx pgx.Tx, spec scheduler.TaskSpec) (scheduler.Task, bool, error) {
	id := scheduler.TaskID(spec.Owner, spec.Name)
	var created bool
	t, err := w.write(ctx, tx, id, func(recs []events.Recorded) (scheduler.TxWrite, error) {
		d, err := scheduler.DecideCreate(w.Scheduler, recs, spec, w.clock().Now())
		created = d.Created
		return d, err
	})
	return t, created && err == nil, err
}

// UpdateTask changes the fields u sets on task id in tx, as
// Scheduler.UpdateTask does (scheduler.IfVersion applies). An unknown task
// is scheduler.ErrTaskNotFound.
func (w Writer) UpdateTask(ctx context.Context, tx pgx.Tx, id uuid.UUID, u scheduler.TaskUpdate, opts ...scheduler.WriteOption) (scheduler.Task, error) {
	return w.write(ctx, tx, id, func(recs []events.Recorded) (scheduler.TxWrite, error) {
		return scheduler.DecideUpdate(w.Scheduler, recs, id, u, w.clock().Now(), opts...)
	})
}

// DeleteTask deletes task id in tx, as Scheduler.DeleteTask does. An
// unknown task is scheduler.ErrTaskNotFound.
func (w Writer) DeleteTask(ctx context.Context, tx pgx.Tx, id uuid.UUID, opts ...scheduler.WriteOption) (scheduler.Task, error) {
	return w.write(ctx, tx, id, func(recs []events.Recorded) (scheduler.TxWrite, error) {
		return scheduler.DecideDelete(recs, id, w.clock().Now(), opts...)
	})
}

// write reads task id's stream in tx, decides, and appends; a version
// conflict (another writer appended meanwhile) reads and decides again.
func (w Writer) write(ctx context.Context, tx pgx.Tx, id uuid.UUID, decide func([]events.Recorded) (scheduler.TxWrite, error)) (scheduler.Task, error) {
	stream := events.TaskStream(id)
	for attempt := 0; ; attempt++ {
		recs, err := postgres.ReadStreamTx(ctx, tx, stream, 0)
		if err != nil && !errors.Is(err, events.ErrStreamNotFound) {
			return scheduler.Task{}, fmt.Errorf("pgtx: %w", err)
		}
		d, err := decide(recs)
		if err != nil {
			return d.Task, fmt.Errorf("pgtx: %w", err)
		}
		if len(d.Events) == 0 {
			return d.Task, nil // nothing to record
		}
		res, err := postgres.AppendTx(ctx, tx, postgres.TxAppend{Stream: d.Stream, Expected: d.Expected, Events: d.Events})
		if errors.Is(err, events.ErrVersionConflict) && attempt < maxConflicts {
			continue // the stream's lock is ours now: the next read sees its last version
		}
		if err != nil {
			return scheduler.Task{}, fmt.Errorf("pgtx: %w", err)
		}
		d.Task.Position = res[0].Position
		return d.Task, nil
	}
}
