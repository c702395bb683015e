package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// schedulePreview runs the command in-process and says what main would
// exit with.
func schedulePreview(args ...string) (stdout, stderr string, exit int) {
	var out, errOut bytes.Buffer
	env := &cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	err := dispatch(context.Background(), env, append([]string{"schedule"}, args...))
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		exit = 2
		errOut.WriteString(err.Error())
	default:
		exit = 1
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), exit
}

func TestSchedulePreview(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"preview", "--cron", "30 2 * * *", "--timezone", "America/New_York", "--from", "2026-03-07T12:00:00Z", "--count", "3"},
			"2026-03-08T03:30:00-04:00\n2026-03-09T02:30:00-04:00\n2026-03-10T02:30:00-04:00\n"},
		{[]string{"preview", "--cron", "30 2 * * *", "--timezone", "America/New_York", "--dst-gap", "skip", "--from", "2026-03-07T12:00:00Z", "--count", "1"},
			"2026-03-09T02:30:00-04:00\n"},
		{[]string{"preview", "--cron=30 1 * * *", "--timezone=America/New_York", "--dst-overlap=both", "--from=2026-10-31T12:00:00Z", "--count=3"},
			"2026-11-01T01:30:00-04:00\n2026-11-01T01:30:00-05:00\n2026-11-02T01:30:00-05:00\n"},
		{[]string{"preview", "--cron", "30 1 * * *", "--timezone", "America/New_York", "--dst-overlap", "last", "--from", "2026-10-31T12:00:00Z", "--count", "1"},
			"2026-11-01T01:30:00-05:00\n"},
		// UTC by default; strictly after --from; a list of expressions.
		{[]string{"preview", "--cron", "0 9 * * MON-FRI", "--cron", "0 12 * * SAT", "--from", "2026-03-06T09:00:00Z", "--count", "2"},
			"2026-03-07T12:00:00Z\n2026-03-09T09:00:00Z\n"},
		// The day forms of §8.4: the last weekday (31 Jan 2026 is a Saturday,
		// 28 Feb too) and the second Friday, in Berlin (CET, +01:00).
		{[]string{"preview", "--cron", "0 9 LW * *", "--cron", "0 9 * * FRI#2", "--timezone", "Europe/Berlin", "--from", "2026-01-01T00:00:00Z", "--count", "4"},
			"2026-01-09T09:00:00+01:00\n2026-01-30T09:00:00+01:00\n2026-02-13T09:00:00+01:00\n2026-02-27T09:00:00+01:00\n"},
		// 02:30 on the last Sunday of March 2026 (the 29th) does not exist in
		// Berlin: shifted to 03:30 CEST.
		{[]string{"preview", "--cron", "30 2 * 3 SUNL", "--timezone", "Europe/Berlin", "--from", "2026-01-01T00:00:00Z", "--count", "1"},
			"2026-03-29T03:30:00+02:00\n"},
	} {
		out, errOut, exit := schedulePreview(c.args...)
		if exit != 0 || out != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want stdout %q", c.args, exit, out, errOut, c.want)
		}
	}
	// -o wide says after each instant what a DST policy did to it; the
	// default output stays one instant a line.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"preview", "--cron", "30 1,2 * * *", "--timezone", "America/New_York", "--from", "2026-03-08T00:00:00-05:00", "--count", "3", "-o", "wide"},
			"2026-03-08T01:30:00-05:00\n2026-03-08T03:30:00-04:00  shifted from 02:30 (does not exist)\n2026-03-09T01:30:00-04:00\n"},
		{[]string{"preview", "--cron", "30 1,2 * * *", "--timezone", "America/New_York", "--dst-overlap", "both", "--from", "2026-11-01T00:00:00-04:00", "--count", "3", "--output", "wide"},
			"2026-11-01T01:30:00-04:00  first of two 01:30\n2026-11-01T01:30:00-05:00  second of two 01:30\n2026-11-01T02:30:00-05:00\n"},
		{[]string{"preview", "--cron", "30 1,2 * * *", "--timezone", "America/New_York", "--dst-overlap", "both", "--from", "2026-11-01T00:00:00-04:00", "--count", "3", "-o", "plain"},
			"2026-11-01T01:30:00-04:00\n2026-11-01T01:30:00-05:00\n2026-11-01T02:30:00-05:00\n"},
		// --exclude repeats: Christmas (a Friday) and second Fridays
		// (11 Dec 2026) are no slots.
		{[]string{"preview", "--cron", "0 9 * * MON-FRI", "--exclude", "2026-12-25", "--exclude", "0 9 * * FRI#2", "--from", "2026-12-10T00:00:00Z", "--count", "4"},
			"2026-12-10T09:00:00Z\n2026-12-14T09:00:00Z\n2026-12-15T09:00:00Z\n2026-12-16T09:00:00Z\n"},
	} {
		out, errOut, exit := schedulePreview(c.args...)
		if exit != 0 || out != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want stdout %q", c.args, exit, out, errOut, c.want)
		}
	}
	// The default count is 10.
	out, _, _ := schedulePreview("preview", "--cron", "@hourly", "--from", "2026-01-01T00:00:00Z")
	if n := strings.Count(out, "\n"); n != 10 {
		t.Errorf("default count: %d lines", n)
	}
	// The default --from is now: one slot, in the future.
	if out, _, exit := schedulePreview("preview", "--cron", "* * * * * *", "--count", "1"); exit != 0 || len(out) != len("2026-01-01T00:00:00Z\n") {
		t.Errorf("from now: %q", out)
	}
}

// TestSchedulePreviewRejects: a bad value exits 1 with nothing on stdout and
// the reason on stderr; a flag the command does not know is a usage error
// (2), like everywhere in the CLI; help exits 0.
func TestSchedulePreviewRejects(t *testing.T) {
	for _, c := range []struct {
		args   []string
		exit   int
		reason string
	}{
		{[]string{"preview", "--cron", "0 24 * * *"}, 1, "field 2 (hour): 24 is above 23"},
		{[]string{"preview", "--cron", "0 0 30 2 *"}, 1, "never matches"},
		{[]string{"preview", "--cron", "0 0 31W 2 *"}, 1, "never matches"},
		{[]string{"preview", "--cron", "0 0 * * FRI#6"}, 1, `--cron: field 5 (day-of-week): "FRI#6"`},
		{[]string{"preview", "--cron", "0 0 10-15W * *"}, 1, "--cron: field 3 (day-of-month)"},
		{[]string{"preview", "--cron", "CRON_TZ=Europe/Berlin 0 9 * * *"}, 1, "use timezone"},
		{[]string{"preview", "--cron", "@daily", "--cron", "0 99 * * *"}, 1, "--cron (expression 2): field 2 (hour)"},
		{[]string{"preview", "--cron", "@daily", "--timezone", "Mars/Olympus_Mons"}, 1, "--timezone: unknown zone"},
		{[]string{"preview", "--cron", "@daily", "--dst-gap", "sideways"}, 1, "--dst-gap: must be shift or skip"},
		{[]string{"preview", "--cron", "@daily", "--dst-overlap", "twice"}, 1, "--dst-overlap"},
		{[]string{"preview", "--cron", "@daily", "--from", "yesterday"}, 1, "--from"},
		{[]string{"preview", "--cron", "@daily", "--count", "0"}, 1, "--count"},
		{[]string{"preview", "--cron", "@daily", "-o", "yaml"}, 1, "-o: want plain or wide"},
		{[]string{"preview", "--cron", "@daily", "--exclude", "2026-13-01"}, 1, "--exclude: entry 1"},
		{[]string{"preview", "--cron", "0 9 * * MON", "--exclude", "* * * * 1"}, 1, "--exclude: excludes every slot"},
		{[]string{"preview", "--cron", "@daily", "--count", "ten"}, 1, "--count"},
		{[]string{"preview"}, 1, "--cron is required"},
		{[]string{"preview", "--cron", "@daily", "--bogus"}, 2, "bogus"},
		{[]string{"preview", "--cron", "@daily", "extra"}, 2, "extra"},
		{[]string{"bogus"}, 2, "unknown subcommand"},
		{nil, 2, "subcommand"},
	} {
		out, errOut, exit := schedulePreview(c.args...)
		if exit != c.exit || out != "" || !strings.Contains(errOut, c.reason) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, exit, out, errOut, c.exit, c.reason)
		}
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"preview", "-h"}, {"preview", "--help"}, {"preview", "--cron", "@daily", "-h"}} {
		out, errOut, exit := schedulePreview(args...)
		if exit != 0 || !strings.Contains(out, "usage: cronactor schedule preview") || errOut != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, exit, out, errOut)
		}
	}
}
