package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Writes decided outside the task's actor, for a caller that appends them
// in a transaction of its own (package pgtx, on PostgreSQL): the caller
// reads the task's stream in its transaction, has one of the Decide…
// functions decide the write against that stream with the same rules the
// actor uses, appends TxWrite.Events with TxWrite.Expected, and commits. A
// scheduler on that store learns of the task from the log (Config.Follow).
// docs/decisions/0026-insert-tx.md.

// ErrSpecConflict: a create names the owner and name of a task that exists
// with another spec. CreateTask returns it as a *SpecConflictError with the
// existing task (the fields its spec leaves zero take the task's, as the
// HTTP API always did); DecideCreate compares the whole spec, defaults
// included: a caller creating in its own transaction wants to know, and can
// roll back.
var ErrSpecConflict = errors.New("scheduler: a task with that owner and name exists with another spec")

// TxWrite is a write to a task decided against its stream as the caller
// read it.
type TxWrite struct {
	// Stream is the task's stream; Expected the version to append at.
	Stream   string
	Expected events.ExpectedVersion
	// Events are the events to append, encoded; none when the write
	// changes nothing (an existing task created again with the same spec,
	// an update that sets what is there, a delete of a deleted task).
	Events []events.Proposed
	// Task is the task as it stands once Events are appended; its Position
	// is the zero Position until the caller sets it from the append.
	Task Task
	// Created is set for a create that makes the task (or a new
	// incarnation of a deleted one).
	Created bool
}

// DecideCreate decides CreateTask's write against recs, the events of the
// task's stream (nil when it has none), at now. s, when not nil, checks the
// kind and the payload with its registered handlers as its CreateTask does
// (without it they are not checked). A task that exists with the same spec
// (as its TaskCreated and later updates left it) is returned with no
// events, created false; with another spec it fails with ErrSpecConflict.
func DecideCreate(s *Scheduler, recs []events.Recorded, spec TaskSpec, now time.Time) (TxWrite, error) {
	spec, err := spec.flatSchedule()
	if err != nil {
		return TxWrite{}, err
	}
	if s != nil {
		if _, ok := s.handlers[spec.Kind]; !ok && spec.Kind != "" {
			return TxWrite{}, &FieldError{Field: "kind", Message: fmt.Sprintf("no handler registered for kind %q", spec.Kind)}
		}
		if err := s.checkPayload(spec.Kind, spec.Payload); err != nil {
			return TxWrite{}, err
		}
	}
	first := spec.FirstRun
	if first.IsZero() && len(spec.Cron) == 0 && len(spec.At) == 0 {
		first = now.Add(spec.Interval)
	}
	id := TaskID(spec.Owner, spec.Name)
	cmd := rules.Create{TaskID: id, FirstRun: first, Spec: spec.rulesSpec()}
	if _, err := rules.Prepare(cmd.Spec, now); err != nil {
		return TxWrite{}, err
	}
	st, pos, err := foldStream(id, recs)
	if err != nil {
		return TxWrite{}, err
	}
	if st.Exists() && st.Status != rules.StatusDeleted {
		fresh, err := rules.Decide(rules.State{}, cmd, now)
		if err != nil {
			return TxWrite{}, err
		}
		same, err := sameSpec(st.Spec, fresh[len(fresh)-1].(events.TaskCreated))
		if err != nil {
			return TxWrite{}, err
		}
		if !same {
			return TxWrite{}, fmt.Errorf("%w: task %s (owner %q, name %q)", ErrSpecConflict, id, spec.Owner, spec.Name)
		}
		return TxWrite{Stream: events.TaskStream(id), Expected: events.Exactly(st.Version), Task: taskFrom(st, pos)}, nil
	}
	w, err := decideAgainst(st, pos, id, cmd, now)
	w.Created = err == nil
	return w, err
}

// DecideUpdate decides UpdateTask's write against recs, the events of
// task id's stream, at now. s, when not nil, checks a new payload with the
// handler of the task's kind. An unknown task is ErrTaskNotFound.
func DecideUpdate(s *Scheduler, recs []events.Recorded, id uuid.UUID, u TaskUpdate, now time.Time, opts ...WriteOption) (TxWrite, error) {
	c, err := u.command()
	if err != nil {
		return TxWrite{}, err
	}
	c.IfVersion = writeOpts(opts).ifVersion
	st, pos, err := foldStream(id, recs)
	if err != nil {
		return TxWrite{}, err
	}
	if !st.Exists() {
		return TxWrite{}, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	if u.Payload != nil {
		if s != nil {
			if err := s.checkPayload(st.Spec.Kind, u.Payload); err != nil {
				return TxWrite{}, err
			}
		}
		c.PayloadKind = st.Spec.Kind
	}
	return decideAgainst(st, pos, id, c, now)
}

// DecideDelete decides DeleteTask's write against recs, the events of task
// id's stream, at now. An unknown task is ErrTaskNotFound.
func DecideDelete(recs []events.Recorded, id uuid.UUID, now time.Time, opts ...WriteOption) (TxWrite, error) {
	st, pos, err := foldStream(id, recs)
	if err != nil {
		return TxWrite{}, err
	}
	if !st.Exists() {
		return TxWrite{}, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return decideAgainst(st, pos, id, rules.Delete{Reason: "deleted", IfVersion: writeOpts(opts).ifVersion}, now)
}

// foldStream is the state recs leave task id in, and the position of the
// last of them.
func foldStream(id uuid.UUID, recs []events.Recorded) (rules.State, events.Position, error) {
	stream := events.TaskStream(id)
	for _, r := range recs {
		if r.Stream != stream {
			return rules.State{}, events.Position{}, fmt.Errorf("scheduler: an event of stream %q given for task %s", r.Stream, id)
		}
	}
	st, err := rules.Replay(recs)
	if err != nil {
		return rules.State{}, events.Position{}, fmt.Errorf("scheduler: fold %s: %w", stream, err)
	}
	var pos events.Position
	if len(recs) > 0 {
		pos = recs[len(recs)-1].Position
	}
	return st, pos, nil
}

// decideAgainst decides cmd against st as the task's actor does, and
// encodes the events as it does (IDs derived from a scope of this
// decision's own, the stream and the expected version).
func decideAgainst(st rules.State, pos events.Position, id uuid.UUID, cmd rules.Command, now time.Time) (TxWrite, error) {
	stream := events.TaskStream(id)
	expected := events.NoStream
	if st.Exists() {
		expected = events.Exactly(st.Version)
	}
	w := TxWrite{Stream: stream, Expected: expected}
	evs, err := rules.Decide(st, cmd, now)
	if errors.Is(err, rules.ErrNotCreated) {
		return w, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	if err != nil {
		return w, err
	}
	scope := stream + "\x00tx\x00" + uuid.NewString()
	at := now.UTC()
	first := uint64(0)
	if st.Exists() {
		first = st.Version + 1
	}
	for i, e := range evs {
		typ, schema, data, err := events.Default.Encode(e)
		if err != nil {
			return w, err
		}
		w.Events = append(w.Events, events.Proposed{ID: events.ContentID(scope, expected, i, typ, data), Type: typ, Schema: schema, At: at, Data: data})
		st.Apply(events.Metadata{Stream: stream, Version: first + uint64(i), At: at}, e)
	}
	if len(evs) == 0 {
		w.Task = taskFrom(st, pos)
		return w, nil
	}
	w.Task = taskFrom(st, events.Position{})
	return w, nil
}

// sameSpec reports whether a task's spec is what the TaskCreated created
// would make it: both written as a TaskCreated's body (times in UTC, the
// payload compacted), without what a create derives from its time.
func sameSpec(have rules.Spec, created events.TaskCreated) (bool, error) {
	h := events.TaskCreated{TaskID: created.TaskID, Name: have.Name, Owner: have.Owner, Kind: have.Kind,
		Payload: have.Payload, Schedule: have.Schedule, Window: have.Window, Tolerance: events.Duration(have.Tolerance),
		Timebox: events.Duration(have.Timebox), Priority: have.Priority, MaxWaiting: have.MaxWaiting, Policy: have.Policy,
		HistoryRetention: events.Duration(have.HistoryRetention)}
	created.NextRun, created.NextSlot = time.Time{}, nil
	var enc [2][]byte
	for i, e := range []events.TaskCreated{h, created} {
		if len(e.Payload) > 0 {
			var b bytes.Buffer
			if err := json.Compact(&b, e.Payload); err != nil {
				return false, fmt.Errorf("scheduler: compare payloads: %w", err)
			}
			e.Payload = b.Bytes()
		}
		_, _, data, err := events.Default.Encode(e)
		if err != nil {
			return false, err
		}
		enc[i] = data
	}
	return bytes.Equal(enc[0], enc[1]), nil
}
