package rules_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

func TestEffects(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	id := uuid.MustParse("00000000-0000-0000-0000-0000000000aa")
	r1, r2 := events.RunID(id, 1), events.RunID(id, 2)
	waiting := rules.Run{ID: r1, Number: 1, Due: t0, EnqueuedAt: t0}
	running := rules.Run{ID: r2, Number: 2, Started: true, StartedAt: t0, Deadline: t0.Add(30 * time.Second)}
	active := rules.State{ID: id, Status: rules.StatusActive, NextRun: t0.Add(time.Minute), Spec: rules.Spec{Owner: "acme", Name: "n"}}
	withRuns := active
	withRuns.Open = []rules.Run{waiting, running}
	paused := active
	paused.Status = rules.StatusPaused
	deleted := active
	deleted.Status = rules.StatusDeleted
	deletedOpen := deleted
	deletedOpen.Open = []rules.Run{running}
	track := rules.Track{NextRun: t0.Add(time.Minute), Active: true}
	watched := withRuns
	watched.Spec.Policy.HeartbeatTimeout = events.Duration(10 * time.Second)
	soon := t0.Add(10 * time.Second)
	retrying := active
	retrying.Retries = []rules.PendingRetry{{Of: r2, Run: 2, Attempt: 2, At: soon}}
	finishedRetrying := retrying
	finishedRetrying.Status, finishedRetrying.NextRun = rules.StatusFinished, time.Time{}
	pausedRetrying := retrying
	pausedRetrying.Status = rules.StatusPaused
	lateRetry := active
	lateRetry.Retries = []rules.PendingRetry{{Of: r2, Run: 2, Attempt: 2, At: t0.Add(2 * time.Minute)}}

	for _, tc := range []struct {
		name  string
		cmd   rules.Command
		after rules.State
		evs   []events.Event
		want  []rules.Effect
	}{
		{"create lists the task under its owner, and tracks", rules.Create{}, active, []events.Event{events.TaskCreated{}},
			[]rules.Effect{rules.Listed{Owner: "acme", Name: "n", Listed: true}, track}},
		{"update tracks", rules.Update{}, active, []events.Event{events.TaskUpdated{}}, []rules.Effect{track}},
		{"resume tracks", rules.Resume{}, active, []events.Event{events.TaskResumed{}}, []rules.Effect{track}},
		{"pause tracks inactive", rules.Pause{}, paused, []events.Event{events.TaskPaused{}},
			[]rules.Effect{rules.Track{NextRun: t0.Add(time.Minute)}}},
		{"tick that enqueues: enqueue, then track", rules.Tick{}, withRuns, []events.Event{events.RunEnqueued{RunID: r1}},
			[]rules.Effect{rules.Enqueue{RunID: waiting.ID}, track}},
		{"tick that enqueues nothing still tracks", rules.Tick{}, active, nil, []rules.Effect{track}},
		{"start arms the deadline", rules.RequestStart{}, withRuns, []events.Event{events.RunStarted{RunID: r2}},
			[]rules.Effect{rules.ArmDeadline{RunID: running.ID, Deadline: running.Deadline, Reason: events.ForcedTimebox}}},
		{"completion stops the timer", rules.Complete{}, active, []events.Event{events.RunCompleted{RunID: r2}},
			[]rules.Effect{rules.StopTimer{RunID: r2}}},
		{"failure stops the timer", rules.Fail{}, active, []events.Event{events.RunFailed{RunID: r2}},
			[]rules.Effect{rules.StopTimer{RunID: r2}}},
		{"forced end stops the timer", rules.ForceEnd{}, active, []events.Event{events.RunForcedEnd{RunID: r2}},
			[]rules.Effect{rules.StopTimer{RunID: r2}}},
		{"a drop does nothing more", rules.RequestStart{}, active, []events.Event{events.RunDropped{RunID: r1}}, nil},
		{"a checkpoint counts as a heartbeat", rules.SaveCheckpoint{}, withRuns, []events.Event{events.CheckpointSaved{RunID: r2}},
			[]rules.Effect{rules.NoteHeartbeat{RunID: r2}}},
		{"a heartbeat of a running run is noted", rules.Heartbeat{RunID: r2}, withRuns, nil,
			[]rules.Effect{rules.NoteHeartbeat{RunID: r2}}},
		{"a heartbeat of a waiting run is not", rules.Heartbeat{RunID: r1}, withRuns, nil, nil},
		{"start with a heartbeat_timeout arms the heartbeat too", rules.RequestStart{}, watched, []events.Event{events.RunStarted{RunID: r2}},
			[]rules.Effect{rules.ArmDeadline{RunID: running.ID, Deadline: running.Deadline, Reason: events.ForcedTimebox}, rules.ArmHeartbeat{RunID: running.ID, StartedAt: running.StartedAt, Timeout: 10 * time.Second}}},
		{"a failure with a retry tracks the retry's time", rules.Fail{}, retrying, []events.Event{events.RunFailed{RunID: r2, RetryAt: &soon}},
			[]rules.Effect{rules.StopTimer{RunID: r2}, rules.Track{NextRun: soon, Active: true}}},
		{"a forced end with a retry tracks too", rules.ForceEnd{}, retrying, []events.Event{events.RunForcedEnd{RunID: r2, RetryAt: &soon}},
			[]rules.Effect{rules.StopTimer{RunID: r2}, rules.Track{NextRun: soon, Active: true}}},
		{"a finished task with a retry pending stays tracked", rules.Tick{}, finishedRetrying, nil,
			[]rules.Effect{rules.Track{NextRun: soon, Active: true}}},
		{"a paused task's retries wait for the resume", rules.Pause{}, pausedRetrying, []events.Event{events.TaskPaused{}},
			[]rules.Effect{rules.Track{NextRun: t0.Add(time.Minute)}}},
		{"a retry due after nextRun: nextRun is tracked", rules.Tick{}, lateRetry, nil, []rules.Effect{track}},
		{"delete with nothing open: unlist, untrack and passivate", rules.Delete{}, deleted, []events.Event{events.TaskDeleted{}},
			[]rules.Effect{rules.Listed{Owner: "acme", Name: "n"}, rules.Track{NextRun: t0.Add(time.Minute)}, rules.Passivate{}}},
		{"delete with a run open: unlisted, no passivate", rules.Delete{}, deletedOpen, []events.Event{events.TaskDeleted{}},
			[]rules.Effect{rules.Listed{Owner: "acme", Name: "n"}, rules.Track{NextRun: t0.Add(time.Minute)}}},
		{"last run of a deleted task ends: stop timer, passivate", rules.Complete{}, deleted, []events.Event{events.RunCompleted{RunID: r2}},
			[]rules.Effect{rules.StopTimer{RunID: r2}, rules.Passivate{}}},
		{"asked about a task that never was: passivate", rules.Pause{}, rules.State{}, nil, []rules.Effect{rules.Passivate{}}},
		{"nothing changed on a live task: nothing", rules.Pause{}, paused, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rules.Effects(tc.cmd, tc.after, tc.evs); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Effects = %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestRecover(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	id := uuid.MustParse("00000000-0000-0000-0000-0000000000bb")
	waiting := rules.Run{ID: events.RunID(id, 2), Number: 2}
	running := rules.Run{ID: events.RunID(id, 1), Number: 1, Started: true, Deadline: t0}
	s := rules.State{ID: id, Status: rules.StatusActive, NextRun: t0, Open: []rules.Run{running, waiting}}
	want := []rules.Effect{
		rules.ArmDeadline{RunID: running.ID, Deadline: running.Deadline, Reason: events.ForcedProcessLost},
		rules.Enqueue{RunID: waiting.ID},
		rules.Track{NextRun: t0, Active: true},
	}
	if got := rules.Recover(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("Recover = %#v\nwant %#v", got, want)
	}
	if got := rules.Recover(rules.State{}); got != nil {
		t.Fatalf("Recover(empty) = %#v", got)
	}
}
