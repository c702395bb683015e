package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Report is every measurement `make bench` takes, each one optional: the
// --json output of `bench store`, `bench projections`, `bench scheduler`,
// `bench lag` and `bench history`, printed as one table.
type Report struct {
	Store       []StoreResult
	Projections *ProjectionsResult
	Scheduler   *SchedulerResult
	// SchedulerPostgres is `bench scheduler --store postgres`, with River.
	SchedulerPostgres *SchedulerResult
	Lag               *LagResult
	History           *HistoryResult
}

// ReadJSONLines decodes every non-empty line of r into a new T.
func ReadJSONLines[T any](r io.Reader) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// Table is the report as one table for people: what was measured, the
// figure, and what it stands beside (the baseline of the same run or the
// bar of DESIGN.md §6). It states bars, it does not judge them: figures
// taken on a machine busy with other work (load_avg_1m) are not comparable.
func (r Report) Table() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	row := func(what, figure, beside string) { fmt.Fprintf(w, "%s\t%s\t%s\n", what, figure, beside) }
	row("MEASUREMENT", "FIGURE", "BESIDE IT")
	for _, s := range r.Store {
		row(fmt.Sprintf("store: appends, %d writer(s)", s.Writers), rate(s.EventsPerS, "events/s"),
			fmt.Sprintf("raw file %s, ratio %.2f; p99 %.0fµs", rate(s.RawEventsPerS, "events/s"), s.Ratio, s.P99us))
	}
	if p := r.Projections; p != nil {
		row(fmt.Sprintf("projections: appends, view following (%d writers)", p.Writers), rate(p.EventsPerS, "events/s"),
			fmt.Sprintf("without the view %s, ratio %.2f", rate(p.BaselineEventsPerS, "events/s"), p.Ratio))
		row("projections: ack → visible in the view", fmt.Sprintf("p99 %.2f ms", p.VisibleP99ms),
			fmt.Sprintf("p50 %.2f ms; rebuild %s", p.VisibleP50ms, rate(p.CatchUpEventsPerS, "events/s")))
	}
	if s := r.Scheduler; s != nil {
		at := fmt.Sprintf("%s tasks", count(s.Tasks))
		row(fmt.Sprintf("scheduler: %s all due, end to end", at), rate(s.RunsPerS, "runs/s"),
			fmt.Sprintf("bar ≥ 20,000 runs/s (100,000 tasks, 2 cores); load avg %.2f", s.LoadAvg1m))
		row("scheduler: durable decisions vs raw appends", fmt.Sprintf("ratio %.2f", s.Ratio),
			fmt.Sprintf("%s / raw %s; bar ≥ 0.15", rate(s.EventsPerS, "events/s"), rate(s.RawEventsPerS, "events/s")))
		row("scheduler: lag due → started, all due", fmt.Sprintf("p99 %.0f ms", s.LagP99ms), fmt.Sprintf("p50 %.0f ms", s.LagP50ms))
		mem := "n/a (Linux only)"
		if s.RSSMeasured {
			mem = count(int(s.RSSBytesPerTask+0.5)) + " B"
		}
		row("scheduler: resident memory per idle task", mem,
			fmt.Sprintf("bar ≤ 1,024 B at 1,000,000 tasks; heap %s B", count(int(s.HeapBytesPerTask+0.5))))
		if s.RestartS > 0 {
			row("scheduler: restart to first tick, fresh process", fmt.Sprintf("%.2f s", s.RestartS),
				fmt.Sprintf("bar ≤ 10 s at 1,000,000 tasks; tick %.0f ms included", s.TickMs))
		}
	}
	if l := r.Lag; l != nil {
		row(fmt.Sprintf("lag: p99 beyond the tick at %.2f × peak", l.Load), fmt.Sprintf("%.1f ms", l.LagP99ms),
			fmt.Sprintf("bar ≤ 50 ms; %s due/s of peak %s, tick %.0f ms; load avg %.2f",
				count(int(l.RatePerS+0.5)), rate(l.PeakRunsPerS, "runs/s"), l.TickMs, l.LoadAvg1m))
	}
	if h := r.History; h != nil {
		beside := func(base, ratio float64) string {
			if h.BaselineEvents == 0 {
				return "bar ≤ 50 ms at 1,000,000 events"
			}
			return fmt.Sprintf("%.1f ms at %s events, ×%.1f; bar ≤ 50 ms and ≤ 3× at 1,000,000", base, count(h.BaselineEvents), ratio)
		}
		at := count(h.Events) + " events"
		row("history: cold load of a task of "+at, fmt.Sprintf("%.1f ms", h.ColdLoadMs), beside(h.BaselineColdLoadMs, h.ColdLoadRatio))
		row(fmt.Sprintf("history: latest page of %d rows, %s", h.Page, at), fmt.Sprintf("%.1f ms", h.HistoryPageMs), beside(h.BaselineHistoryPageMs, h.HistoryPageRatio))
		row("history: explain a time in the middle, "+at, fmt.Sprintf("%.1f ms", h.ExplainMs), beside(h.BaselineExplainMs, h.ExplainRatio))
	}
	if p := r.SchedulerPostgres; p != nil {
		row(fmt.Sprintf("scheduler on Postgres: %s tasks all due", count(p.Tasks)), rate(p.RunsPerS, "runs/s"),
			fmt.Sprintf("raw Postgres appends %s, ratio %.2f; lag p99 %.0f ms; load avg %.2f", rate(p.RawEventsPerS, "events/s"), p.Ratio, p.LagP99ms, p.LoadAvg1m))
		found := false
		for _, q := range p.Peers {
			if q.Peer != "river" && !strings.HasPrefix(q.Peer, "river-") {
				continue
			}
			found = true
			row(fmt.Sprintf("peer: %s %s, %d workers, same Postgres", q.Peer, q.Version, q.Workers), rate(q.RunsPerS, "runs/s"),
				fmt.Sprintf("cronactor / River %.2f×; bar ≥ 1.5×", p.RunsPerS/q.RunsPerS))
		}
		if !found {
			row("peer: River on the same Postgres", "not measured", p.PeersNote)
		}
	}
	// The peers of the scheduler run, else of the lag run.
	var peers PeerResults
	var note string
	var raw float64
	var jobs int
	switch {
	case r.Scheduler != nil:
		peers, note, raw, jobs = r.Scheduler.Peers, r.Scheduler.PeersNote, r.Scheduler.RawEventsPerS, r.Scheduler.Tasks
	case r.Lag != nil:
		peers, note, raw, jobs = r.Lag.Peers, r.Lag.PeersNote, r.Lag.RawEventsPerS, r.Lag.Tasks
	}
	if r.Scheduler != nil || r.Lag != nil {
		for _, p := range peers {
			row(fmt.Sprintf("peer: %s %s, %s jobs all due", p.Peer, p.Version, count(p.Jobs)), rate(p.RunsPerS, "runs/s"),
				fmt.Sprintf("%s; lag p99 %.0f ms", p.Label, p.LagP99ms))
		}
		if note != "" {
			row("peers", "not measured", note)
		}
		row("peer: the raw store, 3 appends per run", rate(raw/3, "runs/s"),
			fmt.Sprintf("durable, nothing scheduled (%s tasks' run)", count(jobs)))
	}
	w.Flush()
	return b.String()
}

// rate formats a per-second figure with thousands separators.
func rate(v float64, unit string) string {
	return count(int(v+0.5)) + " " + unit
}

// count formats n with thousands separators.
func count(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
