package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/cronactor/cronactor/events"
)

// storeRetryAfter is the Retry-After (seconds) of a 503 while the event
// store refuses appends for a condition that may end by itself.
const storeRetryAfter = 30

// writeStatus is what the event store says about its appends, and false
// when it cannot say (events.WriteStatusReader).
func (a *api) writeStatus() (events.WriteStatus, bool) {
	r, ok := a.cfg.Store.(events.WriteStatusReader)
	if !ok {
		return events.WriteStatus{}, false
	}
	return r.WriteStatus(), true
}

// storeHealth is the store object of /healthz: writable, and while the
// store refuses appends, the condition, a message, the count of appends
// refused and whether a restart is needed. Nil when the store cannot say.
// Like the rest of /healthz it shows no path (the log has it).
func (a *api) storeHealth() map[string]any { return storeHealthOf(a.cfg.Store) }

// storeHealthOf is storeHealth of store (nil: none).
func storeHealthOf(store events.Store) map[string]any {
	r, ok := store.(events.WriteStatusReader)
	if !ok {
		return nil
	}
	st := r.WriteStatus()
	if st.Err == nil {
		return map[string]any{"writable": true}
	}
	return map[string]any{"writable": false, "condition": st.Condition(), "message": storeMessage(st.Err, st.RestartNeeded),
		"refused_appends": st.Refused, "restart_needed": st.RestartNeeded}
}

// storeRefused answers a write the event store refused for a condition of
// its own: 507 for a full disk, 503 for the rest (a read-only data
// directory, a failed write), with Retry-After when the store resumes by
// itself. The message names the condition; the store has logged it, with
// its path, once, so nothing is logged per request.
func (a *api) storeRefused(w http.ResponseWriter, err error) {
	restart := errors.Is(err, events.ErrWriteFailed)
	if st, ok := a.writeStatus(); ok && st.Err != nil {
		restart = st.RestartNeeded
	}
	a.cfg.Logger.Debug("write refused: the event store refuses appends", "condition", events.Condition(err), "err", err)
	status := http.StatusServiceUnavailable
	if errors.Is(err, events.ErrNoSpace) {
		status = http.StatusInsufficientStorage
	} else if !restart {
		w.Header().Set("Retry-After", strconv.Itoa(storeRetryAfter))
	}
	writeErr(w, status, "", storeMessage(err, restart))
}

// storeMessage says why the store refuses appends and what ends it.
func storeMessage(err error, restart bool) string {
	switch {
	case errors.Is(err, events.ErrNoSpace) && !restart:
		return "the event store's disk is full: changes are refused until space is freed, then accepted again without a restart; reads still work"
	case errors.Is(err, events.ErrNoSpace):
		return "the event store's disk is full and its store stopped: changes are refused until space is freed and the daemon restarted (restart needed); reads still work"
	case errors.Is(err, events.ErrReadOnly) && !restart:
		return "store: data directory is read-only: changes are refused until its file system is writable again, then accepted again without a restart (after a disk error the kernel keeps it read-only: stop the daemon, check the file system, mount it again, start); reads still work"
	case errors.Is(err, events.ErrReadOnly):
		return "store: data directory is read-only: changes are refused until the file system is writable and the daemon restarted (restart needed); reads still work"
	case errors.Is(err, events.ErrUnreachable):
		return "the event store's server cannot be reached: changes are refused and nothing is recorded until it answers; the daemon reconnects by itself (its log names the address and the error of each attempt)"
	}
	return "store: a write to the event store failed: changes are refused until the disk is checked and the daemon restarted (restart needed); reads still work"
}
