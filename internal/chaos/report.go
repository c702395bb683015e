package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// maxShown bounds the examples printed per invariant.
const maxShown = 5

// WriteKillReport prints the kill run's table: what happened, outcomes by
// kind, violations by invariant, restart times.
func WriteKillReport(w io.Writer, r *KillReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	res := r.Result
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\n", k, v) }
	fmt.Fprintln(tw, "kill run\t")
	row("kills (SIGKILL)", fmt.Sprintf("%d (%d during start-up)", r.Kills, r.EarlyKills))
	if r.StoreRestarts > 0 {
		row("store server restarts", r.StoreRestarts)
	}
	row("tasks created (acknowledged/sent)", fmt.Sprintf("%d/%d", r.CreatesAcked, r.Creates))
	row("tasks in the log", res.Tasks)
	row("pause/resume/delete (acknowledged/sent)", fmt.Sprintf("%d/%d", r.OpsAcked, r.Ops))
	row("events in the log", res.Events)
	row("runs enqueued", res.Runs)
	row("runs started", res.Started)
	row("runs open at the end", res.Open)
	row("http sink deliveries", r.SinkCalls)
	kinds := make([]string, 0, len(res.Outcomes))
	for k := range res.Outcomes {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		row("outcome "+k, res.Outcomes[k])
	}
	row("restart to /healthz median", r.median())
	row("restart to /healthz max", Max(r.Restarts).Round(time.Millisecond))
	row("settle after the last start", r.Settle.Round(time.Millisecond))
	row("final SIGTERM exit status", r.FinalExit)
	row("wall time", r.Elapsed.Round(time.Second))
	tw.Flush()
	fmt.Fprintln(w)
	WriteViolations(w, KillInvariants, res.Violations)
}

func (r *KillReport) median() time.Duration { return Median(r.Restarts).Round(time.Millisecond) }

// WriteViolations prints the count per invariant of invs and a few
// examples of each violation (of any invariant).
func WriteViolations(w io.Writer, invs []string, vs []Violation) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "invariant\tviolations")
	by := map[string][]Violation{}
	for _, v := range vs {
		by[v.Invariant] = append(by[v.Invariant], v)
	}
	shown := append([]string(nil), invs...)
	for _, v := range vs {
		if !contains(shown, v.Invariant) {
			shown = append(shown, v.Invariant)
		}
	}
	for _, inv := range shown {
		fmt.Fprintf(tw, "%s\t%d\n", inv, len(by[inv]))
	}
	tw.Flush()
	for _, inv := range shown {
		for i, v := range by[inv] {
			if i == maxShown {
				fmt.Fprintf(w, "  … %d more %s\n", len(by[inv])-maxShown, inv)
				break
			}
			fmt.Fprintf(w, "  %s: %s\n", inv, oneLine(v.Detail))
		}
	}
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " | ")
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}
