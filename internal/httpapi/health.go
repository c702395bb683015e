package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// retryAfter is the Retry-After (seconds) of a 503 while the view rebuilds.
const retryAfter = 5

// view is the view to query: the Keeper's (an error wrapping
// crontasks.ErrUnavailable while it rebuilds) or Config.View.
func (a *api) view() (*crontasks.View, error) {
	if a.cfg.Keeper == nil {
		return a.cfg.View, nil
	}
	v, err := a.cfg.Keeper.View()
	if errors.Is(err, crontasks.ErrClosed) {
		return nil, &crontasks.UnavailableError{Status: a.cfg.Keeper.Status()}
	}
	return v, err
}

// viewBroken reports whether err means the view cannot answer: it is
// rebuilding, or the query found it damaged (the Keeper replaces it).
func (a *api) viewBroken(err error) bool {
	return err != nil && a.cfg.Keeper != nil && (errors.Is(err, crontasks.ErrUnavailable) ||
		crontasks.Damaged(err) || errors.Is(err, crontasks.ErrClosed))
}

// viewDown reports whether a write's read-your-writes wait failed because
// of the view, not the write: the view is broken, or not ready (a stalled
// view's WaitFor gives up at once).
func (a *api) viewDown(err error) bool {
	return a.viewBroken(err) || (err != nil && a.cfg.Keeper != nil && a.cfg.Keeper.Status().State != crontasks.StateReady)
}

// viewErr turns an error of a view query into the answer to give: the
// view's unavailability (503) when it is broken, else err.
func (a *api) viewErr(err error) error {
	if a.viewBroken(err) && !errors.Is(err, crontasks.ErrUnavailable) {
		st := a.cfg.Keeper.Status()
		if st.State == crontasks.StateReady || st.State == crontasks.StateStalled {
			st.State, st.Reason = crontasks.StateRebuilding, "the view was found damaged"
		}
		return &crontasks.UnavailableError{Status: st}
	}
	return err
}

// waitFor waits, at most ReadTimeout, for the view to fold the log up to
// pos.
func (a *api) waitFor(ctx context.Context, pos events.Position) error {
	v, err := a.view()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.ReadTimeout)
	defer cancel()
	if err := v.WaitFor(ctx, pos); err != nil {
		return fmt.Errorf("httpapi: the view did not reach position %s: %w", pos, err)
	}
	return nil
}

// health is GET /healthz, by one rule for every store
// (docs/decisions/0025-health-rule.md, docs/operations.md):
//   - 503, status "failing": the event store cannot take appends
//     (events.WriteStatusReader: its disk is full or read-only, a write
//     failed, its server — Postgres, EventStoreDB — cannot be reached). The
//     daemon records nothing, so a load balancer must stop sending it
//     writes and an alert must fire; the store object says why.
//   - 200, status "degraded": appends are taken but part of the daemon is
//     behind: the view is not ready (task queries answer 503 until it is).
//     Restarting would not help, and the scheduler runs on.
//   - 200, status "ok": otherwise.
//
// It reads only states kept up to date by their owners (the store's
// cached write status, the Keeper's status): no request to the store, so
// it answers at once whatever the store's server does.
func (a *api) health(w http.ResponseWriter, r *http.Request) {
	code, body := http.StatusOK, map[string]any{"status": "ok"}
	store := a.storeHealth()
	if store != nil && store["writable"] == false {
		code, body["status"] = http.StatusServiceUnavailable, "failing"
	}
	if store != nil {
		body["store"] = store
	}
	if a.cfg.Keeper == nil {
		writeJSON(w, code, body)
		return
	}
	st := a.cfg.Keeper.Status()
	if st.State != crontasks.StateReady && code == http.StatusOK {
		body["status"] = "degraded"
	}
	view := map[string]any{"state": st.State, "position": st.Position.String(), "progress": st.Progress,
		"since": st.Since.UTC().Format(time.RFC3339), "rebuilds": st.Rebuilds}
	if !st.Head.IsZero() {
		view["head"] = st.Head.String()
	}
	if st.State != crontasks.StateReady {
		view["message"] = st.Message()
	}
	if st.MovedAside != "" {
		// Its name next to the view, not the path: /healthz is public.
		view["moved_aside"] = filepath.Base(st.MovedAside)
	}
	body["view"] = view
	writeJSON(w, code, body)
}
