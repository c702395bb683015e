package httpapi

import (
	"net/http"
	"strconv"

	"github.com/cronactor/cronactor/events"
)

// StartingConfig is what the start-up handler reports.
type StartingConfig struct {
	// Store returns the event store once it is open, nil before. Its
	// events.WriteStatusReader, when it has one, says whether it accepts
	// appends (an EventStoreDB server that cannot be reached does not).
	Store func() events.Store
	// Phase names the start-up phase under way ("open_store",
	// "catch_up_view", "recover_tasks"), as the daemon's log does.
	Phase func() string
}

// startingRetryAfter is the Retry-After (seconds) of the start-up
// handler's answers.
const startingRetryAfter = 5

// Starting is the handler a daemon serves on its listener while it starts
// — opens the store, catches the view up, recovers the tasks — in place of
// the API (New) that needs all three: every request is answered at once,
// where it would otherwise wait in the listener's backlog until the start
// ends (half a minute and more against an EventStoreDB server that cannot
// be reached). GET /healthz answers 503 with status "starting", the phase
// and the store object (storeHealth: writable, or why not); every other
// request 503 with a message naming the phase. It reads only cached
// states: it never waits for the store.
func Starting(cfg StartingConfig) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		phase := ""
		if cfg.Phase != nil {
			phase = cfg.Phase()
		}
		w.Header().Set("Retry-After", strconv.Itoa(startingRetryAfter))
		if r.Method == http.MethodGet && r.URL.Path == "/healthz" {
			body := map[string]any{"status": "starting", "phase": phase}
			if cfg.Store != nil {
				if store := storeHealthOf(cfg.Store()); store != nil {
					body["store"] = store
				}
			}
			writeJSON(w, http.StatusServiceUnavailable, body)
			return
		}
		writeErr(w, http.StatusServiceUnavailable, "", "the daemon is starting ("+phase+"): try again in a few seconds")
	})
}
