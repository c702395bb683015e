package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// apiError is the body of every error answer. A 500 says only "internal
// error" and an ID; the detail is logged with that ID (key error_id), so
// that no internal text (file paths, addresses) reaches a client.
type apiError struct {
	Error struct {
		Field   string `json:"field,omitempty"`
		Message string `json:"message"`
		ID      string `json:"id,omitempty"`
	} `json:"error"`
}

func writeErr(w http.ResponseWriter, status int, field, msg string) {
	var e apiError
	e.Error.Field, e.Error.Message = field, msg
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// fieldErr is a 400 naming a field.
type fieldErr struct{ field, msg string }

func (e *fieldErr) Error() string { return e.field + ": " + e.msg }

// fail answers err with the right status.
func (a *api) fail(w http.ResponseWriter, err error) {
	var fe *fieldErr
	var se *scheduler.FieldError
	var tl *tooLargeErr
	switch {
	case errors.As(err, &tl):
		writeErr(w, http.StatusRequestEntityTooLarge, "body", tl.msg)
	case errors.As(err, &fe):
		writeErr(w, http.StatusBadRequest, fe.field, fe.msg)
	case errors.As(err, &se):
		field, msg := se.Field, se.Message
		if i, ok := strings.CutPrefix(field, "cron["); ok {
			// The second and later expressions of a list: the field is
			// cron, the message says which expression.
			n, _ := strconv.Atoi(strings.TrimSuffix(i, "]"))
			field, msg = "cron", fmt.Sprintf("expression %d: %s", n+1, msg)
		}
		writeErr(w, http.StatusBadRequest, field, msg)
	case errors.Is(err, scheduler.ErrTaskNotFound), errors.Is(err, crontasks.ErrNotFound):
		writeErr(w, http.StatusNotFound, "id", "no such task")
	case errors.Is(err, scheduler.ErrSpecConflict):
		msg := err.Error()
		var sc *scheduler.SpecConflictError
		if errors.As(err, &sc) {
			msg = fmt.Sprintf("owner %q already has a task named %q with a different spec (id %s)", sc.Owner, sc.Name, sc.ID)
		}
		writeErr(w, http.StatusConflict, "name", msg)
	case errors.Is(err, rules.ErrCannotTrigger):
		writeErr(w, http.StatusConflict, "id", cannotTrigger(err))
	case errors.Is(err, scheduler.ErrTaskDeleted):
		writeErr(w, http.StatusConflict, "id", "the task is deleted")
	case errors.Is(err, scheduler.ErrVersionMismatch):
		msg := "the task changed since the version in If-Match"
		var ve *scheduler.VersionMismatchError
		if errors.As(err, &ve) {
			msg = fmt.Sprintf("the task is at version %d (ETag %s), not %d; nothing was changed", ve.Actual, etag(ve.Actual), ve.Expected)
		}
		writeErr(w, http.StatusPreconditionFailed, "If-Match", msg)
	case errors.Is(err, crontasks.ErrBadQuery):
		field := "query"
		var qe *crontasks.QueryError
		if errors.As(err, &qe) {
			field = qe.Param
		}
		writeErr(w, http.StatusBadRequest, field, err.Error())
	case errors.Is(err, events.ErrUnwritable):
		a.storeRefused(w, err)
	case errors.Is(err, crontasks.ErrUnavailable):
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		writeErr(w, http.StatusServiceUnavailable, "view", err.Error())
	default:
		id := uuid.NewString()
		a.cfg.Logger.Error("request failed", "error_id", id, "err", err)
		var e apiError
		e.Error.Message, e.Error.ID = "internal error; the server's log has the detail under this id", id
		writeJSON(w, http.StatusInternalServerError, e)
	}
}
