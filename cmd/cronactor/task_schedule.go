package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cronactor/cronactor/projections/crontasks"
)

// repeated is a flag that may be given several times (--cron A --cron B).
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, ", ") }

// Set adds one value.
func (r *repeated) Set(v string) error {
	*r = append(*r, v)
	return nil
}

// scheduleFlags are the schedule fields of task create and update besides
// --interval: the same names as the API's fields (docs/schedules.md).
type scheduleFlags struct {
	cron        repeated
	exclude     repeated
	at, maxRuns string
	fs          *flagSet
}

// scheduleStrings are the schedule flags that go into the body as given (an
// update may clear start_at or end_at with --start-at "").
var scheduleStrings = []string{"timezone", "dst-gap", "dst-overlap", "start-at", "end-at", "jitter"}

func addScheduleFlags(fs *flagSet) *scheduleFlags {
	f := &scheduleFlags{fs: fs}
	fs.Var(&f.cron, "cron", "cron `expression`, 5 fields or 6 with seconds first (days also L, L-n, nW, LW, d#n, dL); repeat it for a list whose slots are united")
	fs.StringVar(&f.at, "at", "", "comma-separated RFC 3339 `times` to run at (one time: a one-time task)")
	fs.String("timezone", "", "IANA `zone` the cron expressions are read in (default UTC)")
	fs.String("dst-gap", "", "`policy` for a wall time that does not exist: shift (default) or skip")
	fs.String("dst-overlap", "", "`policy` for a wall time that happens twice: first (default), last or both")
	fs.Var(&f.exclude, "exclude", "a `date` (2026-12-25) or cron expression whose wall times are no slots; repeat it for several (--exclude '' clears the list)")
	fs.String("start-at", "", "no slot before this RFC 3339 `time`")
	fs.String("end-at", "", "no slot after this RFC 3339 `time`")
	fs.StringVar(&f.maxRuns, "max-runs", "", "at most this `number` of scheduled runs (0: no limit)")
	fs.String("jitter", "", "move every slot later by up to this `duration`, the same for a task and slot every time")
	return f
}

// apply puts the fields given into a create or PATCH body.
func (f *scheduleFlags) apply(body map[string]any) error {
	switch len(f.cron) {
	case 0:
	case 1:
		body["cron"] = f.cron[0]
	default:
		body["cron"] = []string(f.cron)
	}
	if f.fs.given("at") {
		var at []string
		for _, s := range strings.Split(f.at, ",") {
			if s = strings.TrimSpace(s); s != "" {
				at = append(at, s)
			}
		}
		if len(at) == 0 {
			return fmt.Errorf("%w: --at needs RFC 3339 times, e.g. --at 2026-12-01T09:00:00Z,2026-12-02T09:00:00Z", errUsage)
		}
		body["at"] = at
	}
	if f.fs.given("exclude") {
		list := []string{}
		for _, x := range f.exclude {
			if strings.TrimSpace(x) != "" {
				list = append(list, x)
			}
		}
		body["exclude"] = list
	}
	f.fs.putGiven(body, scheduleStrings...)
	if f.fs.given("max-runs") {
		n, err := strconv.Atoi(f.maxRuns)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: --max-runs must be a whole number, 0 or more", errUsage)
		}
		body["max_runs"] = n
	}
	return nil
}

// scheduleText is a task's schedule as written, for the task table:
// "every 2s", "0 9 * * MON-FRI", "*/10 * * * * * | 0 9 * * SAT",
// "at 2026-12-01T08:00:00Z (+1)".
func scheduleText(t crontasks.Task) string {
	switch {
	case len(t.Cron) > 0:
		return escapeControl(strings.Join(t.Cron, " | "))
	case len(t.At) > 0:
		s := "at " + t.At[0].UTC().Format("2006-01-02T15:04:05Z")
		if len(t.At) > 1 {
			s += fmt.Sprintf(" (+%d)", len(t.At)-1)
		}
		return s
	}
	return "every " + compactDuration(time.Duration(t.Interval))
}

// zoneText is the zone a task's slots are read and shown in ("-" for an
// interval task).
func zoneText(t crontasks.Task) string {
	if t.Timezone == "" {
		return "-"
	}
	return escapeControl(t.Timezone)
}

// runTaskUpcoming is `task upcoming ID [--count N]`: the task's next slots,
// one per line, RFC 3339 in its zone's offset (--json: the API's answer).
// A task that is not active has none, as on the dashboard: one line says
// why instead of the slots it would have once resumed.
func runTaskUpcoming(ctx context.Context, env *cliEnv, c *client, id string, count int, asJSON bool) error {
	var t crontasks.Task
	if !asJSON {
		if _, err := c.do(ctx, http.MethodGet, "/v1/tasks/"+url.PathEscape(id), nil, &t); err != nil {
			return err
		}
		if t.Status != "active" {
			fmt.Fprintln(env.stdout, noSlotsWhy(t))
			return nil
		}
	}
	var ans struct {
		Slots []string `json:"slots"`
	}
	path := "/v1/tasks/" + url.PathEscape(id) + "/upcoming?count=" + strconv.Itoa(count)
	raw, err := c.do(ctx, http.MethodGet, path, nil, &ans)
	if err != nil {
		return err
	}
	if asJSON {
		_, err := env.stdout.Write(raw)
		return err
	}
	for _, s := range ans.Slots {
		fmt.Fprintln(env.stdout, s)
	}
	if len(ans.Slots) == 0 {
		// Nothing printed would read as a failure to answer: say why.
		fmt.Fprintln(env.stdout, noSlotsWhy(t))
	}
	return nil
}

// noSlotsWhy says why a task has no upcoming slots.
func noSlotsWhy(t crontasks.Task) string {
	switch t.Status {
	case "paused":
		return fmt.Sprintf("no upcoming slots: the task is paused (task resume %s runs it again)", t.ID)
	case "deleted", "finished":
		return "no upcoming slots: the task is " + t.Status
	}
	return "no upcoming slots: its schedule has none left (end_at, max_runs or its at instants)"
}
