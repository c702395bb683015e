package chaos

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Invariants the checker verifies; a Violation names one of them.
const (
	// InvAckedTask: a create answered 2xx has no TaskCreated in the log.
	InvAckedTask = "acked_task_missing"
	// InvAckedState: a task's status does not match its acknowledged
	// pause/resume/delete calls.
	InvAckedState = "acked_state"
	// InvOneOutcome: an enqueued run has more than one outcome, or an
	// outcome names a run that was never enqueued.
	InvOneOutcome = "one_outcome"
	// InvOpenRun: an enqueued run still has no outcome after the daemon was
	// left to settle (R9).
	InvOpenRun = "open_after_settle"
	// InvDoubleStart: a run was started twice.
	InvDoubleStart = "double_start"
	// InvStartOrder: a run started without being enqueued, ended
	// (completed, failed, forced) without starting, or was dropped after it
	// started.
	InvStartOrder = "start_order"
	// InvSpacing: two scheduled first attempts of a task started closer than
	// interval - tolerance (R3).
	InvSpacing = "spacing_r3"
	// InvVersions: a stream's versions are not 0, 1, 2… in log order.
	InvVersions = "stream_versions"
	// InvPositions: the global log's positions are not 1, 2, 3….
	InvPositions = "global_positions"
	// InvSinkTwice: the http sink received one run ID more than once.
	InvSinkTwice = "sink_saw_run_twice"
	// InvSinkUnstarted: the http sink received a run the log never started.
	InvSinkUnstarted = "sink_saw_unstarted_run"
	// InvDecode: an event body could not be read.
	InvDecode = "undecodable_event"
	// InvStopStart: a run started after a graceful stop began.
	InvStopStart = "start_after_stop"
	// InvLostOnStop: a run started before a graceful stop was found lost
	// (process_lost) afterwards: the drain abandoned it.
	InvLostOnStop = "lost_on_graceful_stop"
	// InvHTTP5xx: the API answered 5xx.
	InvHTTP5xx = "http_5xx"
	// InvHTTPHang: an API request got no answer by its deadline.
	InvHTTPHang = "http_no_answer"
	// InvHalfApplied: a request answered 4xx changed the log.
	InvHalfApplied = "half_applied"
	// InvFault: a fault case did not end as expected.
	InvFault = "fault_case"
)

// Invariants of the kill run and of the fuzzer, in report order.
var (
	KillInvariants = []string{InvAckedTask, InvAckedState, InvOneOutcome, InvOpenRun, InvDoubleStart, InvStartOrder,
		InvSpacing, InvVersions, InvPositions, InvSinkTwice, InvSinkUnstarted, InvDecode, InvFault}
	FuzzInvariants = []string{InvHTTP5xx, InvHTTPHang, InvHalfApplied, InvFault}
)

// Violation is one broken invariant with what shows it.
type Violation struct {
	Invariant string
	Detail    string
}

func (v Violation) String() string { return v.Invariant + ": " + v.Detail }

// Status a task is left in by an acknowledged call.
const (
	StatusActive  = "active"
	StatusPaused  = "paused"
	StatusDeleted = "deleted"
)

// Op is one call the load made on a task, in the order it made them.
type Op struct {
	// Status is the task's status if the call was applied.
	Status string
	// Acked is true when the call was answered 2xx; an unacknowledged call
	// may or may not have been applied.
	Acked bool
}

// Input is what the checker reads: the whole global log, the calls the
// load made, and what the sink received.
type Input struct {
	Log []events.Recorded
	// Ops are the calls made on each task, in order; the first is its
	// create.
	Ops map[uuid.UUID][]Op
	// Sink counts the deliveries of each run ID to the http sink.
	Sink map[uuid.UUID]int
	// Settled says the daemon was left to settle before the log was read,
	// so an open run is a violation.
	Settled bool
	// StatesBefore, if set, is each task's status read from the log at the
	// point the load's calls ended (before settling paused them); with it the
	// checker compares acknowledged calls to the log.
	StatusAt events.Position
}

// Outcome kinds counted in a Result.
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
)

// Result is what the checker found.
type Result struct {
	Tasks      int
	Events     int
	Runs       int
	Started    int
	Open       int
	Outcomes   map[string]int // completed, failed, dropped/<reason>, forced_end/<reason>
	Violations []Violation
}

// Count returns the number of violations of inv.
func (r Result) Count(inv string) int {
	n := 0
	for _, v := range r.Violations {
		if v.Invariant == inv {
			n++
		}
	}
	return n
}

// body holds the fields of every event body the checker reads.
type body struct {
	TaskID   uuid.UUID `json:"task_id"`
	RunID    uuid.UUID `json:"run_id"`
	Run      int       `json:"run"`
	Reason   string    `json:"reason"`
	Attempt  int       `json:"attempt"`
	Trigger  string    `json:"trigger"`
	Schedule struct {
		Interval string `json:"interval"`
	} `json:"schedule"`
	Tolerance string `json:"tolerance"`
}

type runState struct {
	task     uuid.UUID
	number   int
	enqueued bool
	starts   int
	outcomes []string
}

type taskState struct {
	exists    bool
	status    string
	interval  time.Duration
	tolerance time.Duration
	lastStart time.Time
	hasStart  bool
	nextVer   uint64
}

// Check verifies every invariant over in and counts what happened.
func Check(in Input) Result {
	res := Result{Outcomes: map[string]int{}, Events: len(in.Log)}
	add := func(inv, format string, args ...any) {
		res.Violations = append(res.Violations, Violation{inv, fmt.Sprintf(format, args...)})
	}
	tasks := map[uuid.UUID]*taskState{}
	statusAt := map[uuid.UUID]string{}
	runs := map[uuid.UUID]*runState{}
	var order []uuid.UUID // runs in enqueue order, for stable reports
	run := func(id, task uuid.UUID, n int) *runState {
		r := runs[id]
		if r == nil {
			r = &runState{task: task, number: n}
			runs[id] = r
			order = append(order, id)
		}
		return r
	}
	for i, rec := range in.Log {
		if want := uint64(i + 1); rec.Position.Commit != want {
			add(InvPositions, "event %d of the log has position %s, want %d", i, rec.Position, want)
		}
		id, err := events.TaskIDFromStream(rec.Stream)
		if err != nil {
			add(InvDecode, "stream %q at %s: %v", rec.Stream, rec.Position, err)
			continue
		}
		t := tasks[id]
		if t == nil {
			t = &taskState{}
			tasks[id] = t
		}
		if rec.Version != t.nextVer {
			add(InvVersions, "%s: version %d at %s, want %d", rec.Stream, rec.Version, rec.Position, t.nextVer)
		}
		t.nextVer = rec.Version + 1
		var b body
		if err := json.Unmarshal(rec.Data, &b); err != nil {
			add(InvDecode, "%s@%d %s: %v", rec.Stream, rec.Version, rec.Type, err)
			continue
		}
		label := func() string { return fmt.Sprintf("task %s run %d (%s)", id, b.Run, b.RunID) }
		switch rec.Type {
		case "TaskCreated", "TaskUpdated":
			if rec.Type == "TaskCreated" {
				t.exists, t.status, t.hasStart = true, StatusActive, false
			}
			if d, err := time.ParseDuration(b.Schedule.Interval); err == nil {
				t.interval = d
			} else if rec.Type == "TaskCreated" {
				t.interval = 0 // not an interval schedule: no spacing check
			}
			if d, err := time.ParseDuration(b.Tolerance); err == nil {
				t.tolerance = d
			}
		case "TaskPaused":
			t.status = StatusPaused
		case "TaskResumed":
			t.status = StatusActive
		case "TaskDeleted":
			t.status = StatusDeleted
		case "RunEnqueued":
			r := run(b.RunID, id, b.Run)
			if r.enqueued {
				add(InvOneOutcome, "%s enqueued twice", label())
			}
			r.enqueued = true
		case "RunStarted":
			r := run(b.RunID, id, b.Run)
			r.starts++
			switch {
			case r.starts > 1:
				add(InvDoubleStart, "%s started %d times (again at %s)", label(), r.starts, rec.At.Format(time.RFC3339Nano))
			case !r.enqueued:
				add(InvStartOrder, "%s started without being enqueued", label())
			case len(r.outcomes) > 0:
				add(InvStartOrder, "%s started after its outcome %s", label(), r.outcomes[0])
			}
			res.Started++
			if b.Attempt > 1 || b.Trigger != "" {
				break // retries and manual triggers skip R3 (R13, R15)
			}
			if t.hasStart && t.interval > 0 {
				need := t.interval - t.tolerance
				if gap := rec.At.Sub(t.lastStart); gap < need {
					add(InvSpacing, "%s started %s after the previous start, needs %s (interval %s - tolerance %s)",
						label(), gap, need, t.interval, t.tolerance)
				}
			}
			t.lastStart, t.hasStart = rec.At, true
		case "RunCompleted", "RunFailed", "RunForcedEnd", "RunDropped":
			r := run(b.RunID, id, b.Run)
			kind := map[string]string{"RunCompleted": OutcomeCompleted, "RunFailed": OutcomeFailed,
				"RunForcedEnd": "forced_end/" + b.Reason, "RunDropped": "dropped/" + b.Reason}[rec.Type]
			r.outcomes = append(r.outcomes, kind)
			res.Outcomes[kind]++
			switch {
			case !r.enqueued:
				add(InvOneOutcome, "%s has outcome %s but was never enqueued", label(), kind)
			case len(r.outcomes) > 1:
				add(InvOneOutcome, "%s has %d outcomes: %v", label(), len(r.outcomes), r.outcomes)
			case rec.Type == "RunDropped" && r.starts > 0:
				add(InvStartOrder, "%s dropped after it started", label())
			case rec.Type != "RunDropped" && r.starts == 0:
				add(InvStartOrder, "%s has outcome %s without a start", label(), kind)
			}
		}
		if !in.StatusAt.IsZero() && !in.StatusAt.Less(rec.Position) {
			statusAt[id] = t.status
		}
	}
	for _, t := range tasks {
		if t.exists {
			res.Tasks++
		}
	}
	for _, id := range order {
		r := runs[id]
		if r.enqueued {
			res.Runs++
			if len(r.outcomes) == 0 {
				res.Open++
				if in.Settled {
					add(InvOpenRun, "task %s run %d (%s) has no outcome (started %d times)", r.task, r.number, id, r.starts)
				}
			}
		}
	}
	ids := make([]uuid.UUID, 0, len(in.Ops))
	for id := range in.Ops {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for _, id := range ids {
		ops := in.Ops[id]
		if len(ops) == 0 || !ops[0].Acked {
			continue
		}
		t := tasks[id]
		if t == nil || !t.exists {
			add(InvAckedTask, "task %s: its create was answered 2xx, the log has no TaskCreated", id)
			continue
		}
		if in.StatusAt.IsZero() {
			continue
		}
		if got, want := statusAt[id], allowed(ops); !want[got] {
			add(InvAckedState, "task %s is %q at %s; its acknowledged calls allow %v", id, got, in.StatusAt, keys(want))
		}
	}
	sinkIDs := make([]uuid.UUID, 0, len(in.Sink))
	for id := range in.Sink {
		sinkIDs = append(sinkIDs, id)
	}
	sort.Slice(sinkIDs, func(i, j int) bool { return sinkIDs[i].String() < sinkIDs[j].String() })
	for _, id := range sinkIDs {
		if n := in.Sink[id]; n > 1 {
			add(InvSinkTwice, "run %s reached the sink %d times", id, n)
		}
		if r := runs[id]; r == nil || r.starts == 0 {
			add(InvSinkUnstarted, "run %s reached the sink but the log has no RunStarted for it", id)
		}
	}
	return res
}

// allowed is the set of statuses a task may be in after ops: the status of
// the last acknowledged call, or of any unacknowledged call after it (which
// may have been applied).
func allowed(ops []Op) map[string]bool {
	last := 0
	for i, op := range ops {
		if op.Acked {
			last = i
		}
	}
	out := map[string]bool{ops[last].Status: true}
	for _, op := range ops[last+1:] {
		out[op.Status] = true
	}
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
