package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // zones work on hosts without a zone database

	"github.com/cronactor/cronactor/actors/task/schedule"
)

func init() {
	commands["schedule"] = command{
		summary: "offline schedule tools: schedule preview --cron EXPR [--timezone TZ] [--count N]",
		run: func(_ context.Context, env *cliEnv, args []string) error {
			return runSchedulePreview(env, args[1:], time.Now) // dispatch checked the subcommand
		},
		subs: []string{"preview"},
	}
}

// cronList collects --cron, which may repeat (the slots are united).
type cronList []string

func (c *cronList) String() string     { return strings.Join(*c, "; ") }
func (c *cronList) Set(s string) error { *c = append(*c, s); return nil }

// runSchedulePreview: an unknown flag or a stray argument is a usage error
// (exit 2); a bad value — expression, zone, policy, time, count — exits 1
// with the error on stderr and nothing on stdout, as every command does.
func runSchedulePreview(env *cliEnv, args []string, now func() time.Time) error {
	fs := newFlags(env, "schedule preview")
	var crons cronList
	fs.Var(&crons, "cron", "cron `expression`: 5 fields, 6 (seconds first) or a macro; days also L, L-n, nW, LW, d#n, dL; repeat for several")
	var exclude cronList
	fs.Var(&exclude, "exclude", "a `date` (2026-12-25) or cron expression whose wall times are no slots; repeat for several")
	zone := fs.String("timezone", "UTC", "IANA `zone` the expression is read in")
	gap := fs.String("dst-gap", "shift", "a wall time that does not exist: `shift or skip`")
	overlap := fs.String("dst-overlap", "first", "a wall time that happens twice: `first, last or both`")
	from := fs.String("from", "", "list slots strictly after this RFC 3339 `time` (default now)")
	count := fs.String("count", "10", "how many slots (`N`)")
	var output string
	fs.stringAlias(&output, "o", "output", "plain", "`plain` (one instant a line) or wide (each followed by what a DST policy did to it)")
	if err := fs.parse(args); err != nil {
		return err // help (exit 0) or an unknown flag (exit 2)
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	if len(crons) == 0 {
		return errors.New("schedule preview: --cron is required")
	}
	if output != "plain" && output != "wide" {
		return fmt.Errorf("schedule preview: -o: want plain or wide, got %q", output)
	}
	n, err := strconv.Atoi(*count)
	if err != nil || n < 1 {
		return fmt.Errorf("schedule preview: --count: want a whole number of at least 1, got %q", *count)
	}
	after := now()
	if *from != "" {
		if after, err = time.Parse(time.RFC3339Nano, *from); err != nil {
			return fmt.Errorf("schedule preview: --from: want an RFC 3339 time like 2026-03-08T00:00:00Z, got %q", *from)
		}
	}
	s, err := schedule.Compile(schedule.Spec{Cron: crons, Exclude: exclude, Timezone: *zone, DSTGap: *gap, DSTOverlap: *overlap})
	if err != nil {
		return fmt.Errorf("schedule preview: %s", flagNames(err))
	}
	var out strings.Builder
	for slot := range s.Slots(after) {
		if n == 0 {
			break
		}
		n--
		out.WriteString(slot.Format(time.RFC3339))
		if note := s.Note(slot); output == "wide" && note != "" {
			out.WriteString("  ")
			out.WriteString(note)
		}
		out.WriteByte('\n')
	}
	_, err = io.WriteString(env.stdout, out.String())
	return err
}

// flagNames words a schedule rejection with the flag's name instead of the
// API field's (dst_gap → --dst-gap, cron[1] → the second --cron).
func flagNames(err error) string {
	var se *schedule.Error
	if !errors.As(err, &se) {
		return err.Error()
	}
	field := "--" + strings.ReplaceAll(se.Field, "_", "-")
	if i, ok := strings.CutPrefix(se.Field, "cron["); ok {
		n, _ := strconv.Atoi(strings.TrimSuffix(i, "]"))
		field = fmt.Sprintf("--cron (expression %d)", n+1)
	}
	return field + ": " + se.Message
}
