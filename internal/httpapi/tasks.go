package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// row reads a task's row once the view has folded the log up to pos, the
// position of the write it follows (read-your-writes). While the view is
// rebuilding (or turns out damaged meanwhile) the row is folded from the
// task's own events instead: the write is done, and never waits for a
// rebuild.
func (a *api) row(ctx context.Context, id uuid.UUID, pos events.Position) (crontasks.Task, error) {
	err := a.waitFor(ctx, pos)
	if err == nil {
		var v *crontasks.View
		if v, err = a.view(); err == nil {
			var t crontasks.Task
			if t, err = v.Get(ctx, id); err == nil {
				return t, nil
			}
		}
	}
	if !a.viewDown(err) {
		return crontasks.Task{}, err
	}
	recs, err := a.cfg.Store.ReadStream(ctx, events.TaskStream(id), 0, 0)
	if err != nil {
		return crontasks.Task{}, fmt.Errorf("httpapi: read task %s while the view is unavailable: %w", id, err)
	}
	return crontasks.RowOf(recs)
}

func (a *api) get(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	live, err := a.view()
	if err != nil {
		a.fail(w, err)
		return
	}
	if asOf := r.URL.Query().Get("as_of"); asOf != "" {
		if !a.asOfs.acquire() {
			a.tooMany(w, a.asOfs, "as_of")
			return
		}
		defer a.asOfs.release()
		v, err := a.asOf(r.Context(), live, asOf)
		if err != nil {
			a.fail(w, err)
			return
		}
		defer v.Close()
		t, err := v.Get(r.Context(), id)
		if err != nil {
			a.fail(w, err)
			return
		}
		setETag(w, t)
		writeJSON(w, http.StatusOK, t)
		return
	}
	t, err := live.Get(r.Context(), id)
	if err != nil {
		a.fail(w, a.viewErr(err))
		return
	}
	setETag(w, t)
	writeJSON(w, http.StatusOK, t)
}

// asOf opens the view as of the point s names: from the live view's
// nearest snapshot before it, or folded from the log when there is no live
// view.
func (a *api) asOf(ctx context.Context, live *crontasks.View, s string) (*crontasks.View, error) {
	p, err := crontasks.ParsePoint(s)
	if err != nil {
		return nil, &fieldErr{"as_of", err.Error()}
	}
	if live != nil {
		v, err := live.AsOf(ctx, p)
		return v, a.viewErr(err)
	}
	return crontasks.AsOf(ctx, a.cfg.ViewConfig, p)
}

func (a *api) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k := range q {
		switch k {
		case "owner", "status", "due_before", "limit", "cursor", "as_of":
		default:
			a.fail(w, &fieldErr{k, "unknown query parameter"})
			return
		}
	}
	query := crontasks.Query{Owner: q.Get("owner"), Status: q.Get("status"), Cursor: q.Get("cursor")}
	var err error
	if query.DueBefore, err = parseTime("due_before", q.Get("due_before")); err != nil {
		a.fail(w, err)
		return
	}
	if l := q.Get("limit"); l != "" {
		if query.Limit, err = strconv.Atoi(l); err != nil || query.Limit < 1 || query.Limit > crontasks.MaxLimit {
			a.fail(w, &fieldErr{"limit", fmt.Sprintf("must be a number from 1 to %d", crontasks.MaxLimit)})
			return
		}
	}
	if err := query.Validate(); err != nil {
		a.fail(w, err)
		return
	}
	v, err := a.view()
	if err != nil {
		a.fail(w, err)
		return
	}
	if asOf := q.Get("as_of"); asOf != "" {
		if !a.asOfs.acquire() {
			a.tooMany(w, a.asOfs, "as_of")
			return
		}
		defer a.asOfs.release()
		if v, err = a.asOf(r.Context(), v, asOf); err != nil {
			a.fail(w, err)
			return
		}
		defer v.Close()
	}
	page, err := v.Query(r.Context(), query)
	if err != nil {
		a.fail(w, a.viewErr(err))
		return
	}
	if page.Tasks == nil {
		page.Tasks = []crontasks.Task{}
	}
	writeJSON(w, http.StatusOK, page)
}

func (a *api) answer(w http.ResponseWriter, r *http.Request, t scheduler.Task, err error) {
	if err != nil {
		a.fail(w, err)
		return
	}
	row, err := a.row(r.Context(), t.ID, t.Position)
	if err != nil {
		a.fail(w, err)
		return
	}
	setETag(w, row)
	writeJSON(w, http.StatusOK, row)
}

func (a *api) pause(w http.ResponseWriter, r *http.Request) {
	a.do(w, r, a.cfg.Scheduler.PauseTask)
}

func (a *api) resume(w http.ResponseWriter, r *http.Request) {
	a.do(w, r, a.cfg.Scheduler.ResumeTask)
}

func (a *api) delete(w http.ResponseWriter, r *http.Request) {
	a.do(w, r, a.cfg.Scheduler.DeleteTask)
}

func (a *api) do(w http.ResponseWriter, r *http.Request, f func(context.Context, uuid.UUID, ...scheduler.WriteOption) (scheduler.Task, error)) {
	id, err := pathID(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	opts, err := ifMatch(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	t, err := f(r.Context(), id, opts...)
	a.answer(w, r, t, err)
}

// deleteOwner is DELETE /v1/owners/{owner}/tasks; the owner may contain
// slashes (escaped or not).
func (a *api) deleteOwner(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(r.URL.EscapedPath(), "/v1/owners/")
	p, ok := strings.CutSuffix(p, "/tasks")
	if !ok || p == "" {
		writeErr(w, http.StatusNotFound, "path", "use DELETE /v1/owners/{owner}/tasks")
		return
	}
	owner, err := url.PathUnescape(p)
	if err != nil {
		a.fail(w, &fieldErr{"owner", err.Error()})
		return
	}
	d, err := a.cfg.Scheduler.DeleteOwner(r.Context(), owner)
	if err != nil {
		a.fail(w, err)
		return
	}
	// The answer does not come from the view: a rebuilding one is not
	// waited for.
	if err := a.waitFor(r.Context(), d.Position); err != nil && !a.viewDown(err) {
		a.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"owner": owner, "deleted": d.Deleted})
}
