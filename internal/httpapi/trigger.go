package httpapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/google/uuid"
)

// TriggerBody is the answer of POST /v1/tasks/{id}/trigger: the run a
// manual trigger enqueued (R15).
type TriggerBody struct {
	TaskID uuid.UUID `json:"task_id"`
	RunID  uuid.UUID `json:"run_id"`
}

// trigger is POST /v1/tasks/{id}/trigger: one run now, outside the
// schedule (R15). 202 with the run's ID once its enqueue is recorded; a
// task that refuses (paused, finished, deleted, or at its bound of waiting
// runs) is a 409 whose message gives the reason; an unknown task a 404.
func (a *api) trigger(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	if err := onlyParams(r); err != nil {
		a.fail(w, err)
		return
	}
	run, err := a.cfg.Scheduler.Trigger(r.Context(), id)
	if err != nil {
		a.fail(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, TriggerBody{TaskID: id, RunID: run})
}

// cannotTrigger is the words of a refused trigger: "the task cannot be
// triggered: the task is paused", without the package prefixes of the
// errors that wrap it.
func cannotTrigger(err error) string {
	msg := err.Error()
	want := strings.TrimPrefix(rules.ErrCannotTrigger.Error(), "rules: ")
	if i := strings.Index(msg, want); i >= 0 {
		return msg[i:]
	}
	if errors.Is(err, rules.ErrCannotTrigger) {
		return want
	}
	return msg
}
