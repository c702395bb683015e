package history_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/history"
)

// The audit trail shows a task created again after a delete as a new
// incarnation: active, no lastRun, its own spec, also on the row of a run
// of the old incarnation ending afterwards.
func TestRecreatedTaskHistory(t *testing.T) {
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := newTaskLog(t, st, "A")
	created := events.TaskCreated{TaskID: a.id, Name: "A", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
		Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(50 * time.Second), NextRun: at("00:30")}
	r1, r2 := events.RunID(a.id, 1), events.RunID(a.id, 2)
	a.add("00:00", created)
	a.add("00:30", events.RunEnqueued{RunID: r1, Run: 1, Due: at("00:30"), NextRun: at("01:30")})
	a.add("00:31", events.RunStarted{RunID: r1, Run: 1, Deadline: at("01:21")})
	a.add("01:30", events.RunEnqueued{RunID: r2, Run: 2, Due: at("01:30"), NextRun: at("02:30")})
	a.add("01:40", events.TaskDeleted{Reason: "deleted"})
	again := created
	again.Schedule.Interval, again.Timebox, again.NextRun = events.Duration(2*time.Minute), events.Duration(time.Minute), at("05:00")
	a.add("01:50", events.RunDropped{RunID: r2, Run: 2, Reason: events.DropDeleted, Detail: "created again"})
	a.add("01:50", again)
	a.add("01:55", events.RunCompleted{RunID: r1, Run: 1, Checkpoint: json.RawMessage(`{"old":true}`)})
	recs := a.read()
	rows, err := history.Rows(recs)
	if err != nil {
		t.Fatal(err)
	}
	if text := rows[len(rows)-2].Text(history.Relative(at("00:00"))); text != "A is created again (incarnation 2: no lastRun, no checkpoint)" {
		t.Errorf("the re-create reads %q", text)
	}
	for _, i := range []int{len(rows) - 2, len(rows) - 1} { // the re-create and the old run's end
		r := rows[i]
		if r.Status != history.StatusActive || r.LastRun != nil || r.NextRun == nil || !r.NextRun.Equal(at("05:00")) ||
			r.Interval != 2*time.Minute || r.Timebox != time.Minute {
			t.Errorf("%s row: status %s last_run %v next_run %v interval %s timebox %s, want the new incarnation's",
				r.Event, r.Status, r.LastRun, r.NextRun, r.Interval, r.Timebox)
		}
	}
}
