package httpapi

import "net/http"

// queueRow is one queue in GET /v1/queues.
type queueRow struct {
	Name       string `json:"name"`
	Limit      int    `json:"limit"`
	Depth      int64  `json:"depth"`
	Busy       int64  `json:"busy"`
	Configured bool   `json:"configured"`
}

// queues answers GET /v1/queues: each named queue's limit, its runs
// waiting for a worker (depth), its workers executing a run (busy), and
// whether the daemon was started with it (a queue only a task names has
// the default queue's limit), by name.
func (a *api) queues(w http.ResponseWriter, r *http.Request) {
	st := a.cfg.Scheduler.Stats()
	out := struct {
		Queues []queueRow `json:"queues"`
	}{Queues: make([]queueRow, 0, len(st.Queues))}
	for _, q := range st.Queues {
		out.Queues = append(out.Queues, queueRow{Name: q.Name, Limit: q.Limit, Depth: q.Depth, Busy: q.Busy, Configured: q.Configured})
	}
	writeJSON(w, http.StatusOK, out)
}
