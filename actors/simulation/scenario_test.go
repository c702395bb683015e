package simulation

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
)

const designScenario = `
tick: 30s
until: "03:00"
tasks:
  - name: A
    interval: 1m
    tolerance: 5s        # optional, default 5s
    timebox: 30s         # optional, default interval/2
    first_run: "00:30"   # the initial nextRun
    runs:                # what happens to the 1st, 2nd, … enqueued run of A
      - {start: "00:35", duration: 10s}   # a worker picks it up at 00:35; it works 10 s
      - {start: "01:32", duration: 10s}
      - {start_delay: 3s, duration: 5m}   # picked up 3 s after enqueue; overruns, so it is forced to end
`

func TestParseDesignScenario(t *testing.T) {
	sc, err := Parse([]byte(designScenario))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Tick != 30*time.Second || sc.Until != 3*time.Minute || len(sc.Tasks) != 1 {
		t.Fatalf("scenario = %+v", sc)
	}
	a := sc.Tasks[0]
	if a.Name != "A" || a.Interval != time.Minute || a.Tolerance != 5*time.Second || a.Timebox != 30*time.Second || a.FirstRun != 30*time.Second {
		t.Fatalf("task = %+v", a)
	}
	want := []RunScript{
		{Start: 35 * time.Second, HasStart: true, Duration: 10 * time.Second, Line: 11},
		{Start: 92 * time.Second, HasStart: true, Duration: 10 * time.Second, Line: 12},
		{StartDelay: 3 * time.Second, Duration: 5 * time.Minute, Line: 13},
	}
	if len(a.Runs) != len(want) {
		t.Fatalf("runs = %+v", a.Runs)
	}
	for i := range want {
		if a.Runs[i] != want[i] {
			t.Errorf("run %d = %+v, want %+v", i, a.Runs[i], want[i])
		}
	}
}

func TestParseDefaultsAndJSON(t *testing.T) {
	sc, err := Parse([]byte(`{"tick":"1s","until":"01:00:00","tasks":[{"name":"B","interval":"10s"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b := sc.Tasks[0]
	// The scheduler's defaults: tolerance min(5s, interval/10), timebox
	// interval/2, first run one interval after creation.
	if sc.Until != time.Hour || b.Tolerance != time.Second || b.Timebox != 5*time.Second || b.FirstRun != 10*time.Second || len(b.Runs) != 0 {
		t.Fatalf("scenario %+v task %+v", sc, b)
	}
}

// An explicit 0s tolerance is kept, not replaced by the default.
func TestParseZeroTolerance(t *testing.T) {
	sc, err := Parse([]byte("tick: 30s\nuntil: \"03:00\"\ntasks:\n  - {name: A, interval: 1m, tolerance: 0s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Tasks[0].Tolerance != 0 {
		t.Errorf("tolerance = %v, want 0", sc.Tasks[0].Tolerance)
	}
}

func TestParseExtensions(t *testing.T) {
	sc, err := Parse([]byte(`
tick: 10s
until: "05:00"
downtime:
  - {from: "04:10", to: "04:40"}
tasks:
  - name: A
    interval: 1m
    create_at: "00:20"
    pause_at: ["01:00", "03:00"]
    resume_at: "02:00"
    delete_at: "04:00"
    runs:
      - {duration: 10s, fail: "disk full", checkpoint: '{"page":3}'}
      - {panic: boom}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := sc.Tasks[0]
	if len(sc.Downtimes) != 1 || sc.Downtimes[0].From != 250*time.Second || sc.Downtimes[0].To != 280*time.Second {
		t.Errorf("downtimes = %+v", sc.Downtimes)
	}
	if a.CreateAt != 20*time.Second || a.FirstRun != 80*time.Second || a.Tolerance != 5*time.Second || a.Timebox != 30*time.Second || len(a.PauseAt) != 2 || len(a.ResumeAt) != 1 || !a.HasDelete || a.DeleteAt != 4*time.Minute {
		t.Errorf("task = %+v", a)
	}
	if a.Runs[0].Fail != "disk full" || a.Runs[0].Checkpoint != `{"page":3}` || a.Runs[1].Panic != "boom" {
		t.Errorf("runs = %+v", a.Runs)
	}
}

func TestParseErrors(t *testing.T) {
	base := "tick: 30s\nuntil: \"03:00\"\ntasks:\n"
	for _, c := range []struct {
		name, text string
		want       []string // all must appear in the message
	}{
		{"syntax", "tick: [", []string{"yaml"}},
		{"empty", "", []string{"empty scenario"}},
		{"not a mapping", "- 1", []string{"line 1", "scenario"}},
		{"unknown top field", "tick: 30s\nuntil: \"03:00\"\ntikc: 1s\ntasks: []", []string{"line 3", "tikc", "unknown field"}},
		{"unknown task field", base + "  - name: A\n    interval: 1m\n    intervall: 2m\n", []string{"line 6", "tasks[0].intervall", "unknown field"}},
		{"unknown run field", base + "  - name: A\n    interval: 1m\n    runs:\n      - {start: \"00:30\", durration: 1s}\n", []string{"line 7", "tasks[0].runs[0].durration"}},
		{"bad duration", base + "  - name: A\n    interval: 1x\n", []string{"line 5", "tasks[0].interval", "bad duration"}},
		{"negative duration", base + "  - name: A\n    interval: 1m\n    timebox: -1s\n", []string{"line 6", "tasks[0].timebox", "negative"}},
		{"zero interval", base + "  - name: A\n    interval: 0s\n", []string{"tasks[0].interval", "positive"}},
		{"tolerance above interval", base + "  - name: A\n    interval: 1m\n    tolerance: 2m\n", []string{"line 6", "tasks[0].tolerance", "less than half the interval"}},
		{"tolerance half the interval", base + "  - name: A\n    interval: 1m\n    tolerance: 30s\n", []string{"line 6", "tasks[0].tolerance"}},
		{"timebox above interval", base + "  - name: A\n    interval: 1m\n    timebox: 2m\n", []string{"line 6", "tasks[0].timebox", "exceed"}},
		{"interval below the minimum", base + "  - name: A\n    interval: 100ms\n", []string{"line 5", "tasks[0].interval"}},
		{"checkpoint not JSON", base + "  - name: A\n    interval: 1m\n    runs:\n      - {checkpoint: 'page 3'}\n", []string{"line 7", "tasks[0].runs[0].checkpoint", "JSON"}},
		{"pause while down", "tick: 30s\nuntil: \"09:00\"\ndowntime: [{from: \"01:00\", to: \"05:00\"}]\ntasks:\n  - {name: A, interval: 1m, pause_at: \"02:00\"}\n", []string{"line 5", "tasks[0].pause_at", "down"}},
		{"bad time", base + "  - name: A\n    interval: 1m\n    first_run: \"1:2:3:4\"\n", []string{"line 6", "tasks[0].first_run", "bad time"}},
		{"bad seconds", "tick: 30s\nuntil: \"03:60\"\ntasks: []\n", []string{"line 2", "until", "00..59"}},
		{"no tasks", "tick: 30s\nuntil: \"03:00\"\ntasks: []\n", []string{"line 3", "tasks", "no tasks"}},
		{"missing tasks", "tick: 30s\nuntil: \"03:00\"\n", []string{"tasks", "required"}},
		{"missing interval", base + "  - name: A\n", []string{"line 4", "tasks[0].interval", "required"}},
		{"zero tick", "tick: 0s\nuntil: \"03:00\"\ntasks: []\n", []string{"line 1", "tick", "positive"}},
		{"duplicate names", base + "  - {name: A, interval: 1m}\n  - {name: A, interval: 2m}\n", []string{"line 5", "tasks[1].name", "duplicate", "line 4"}},
		{"duplicate field", base + "  - {name: A, interval: 1m, interval: 2m}\n", []string{"tasks[0].interval", "twice"}},
		{"start before enqueue", base + "  - name: A\n    interval: 1m\n    first_run: \"00:30\"\n    runs:\n      - {start: \"00:20\", duration: 1s}\n", []string{"line 8", "tasks[0].runs[0].start", "before run 1", "00:30"}},
		{"second start before enqueue", base + "  - name: A\n    interval: 1m\n    first_run: \"00:30\"\n    runs:\n      - {start: \"00:35\"}\n      - {start: \"01:00\"}\n", []string{"line 9", "tasks[0].runs[1].start", "01:30"}},
		{"start and delay", base + "  - name: A\n    interval: 1m\n    runs:\n      - {start: \"00:35\", start_delay: 1s}\n", []string{"tasks[0].runs[0].start_delay", "not both"}},
		{"fail and panic", base + "  - name: A\n    interval: 1m\n    runs:\n      - {fail: x, panic: y}\n", []string{"tasks[0].runs[0].panic"}},
		{"list for a duration", base + "  - name: A\n    interval: [1m]\n", []string{"tasks[0].interval", "single value"}},
		{"null duration", base + "  - name: A\n    interval:\n", []string{"tasks[0].interval"}},
		{"downtime backwards", "tick: 30s\nuntil: \"03:00\"\ndowntime: [{from: \"02:00\", to: \"01:00\"}]\ntasks: [{name: A, interval: 1m}]\n", []string{"downtime[0].to"}},
		{"pause after delete", base + "  - {name: A, interval: 1m, pause_at: \"02:00\", delete_at: \"01:00\"}\n", []string{"line 4", "outside"}},
		{"json unknown field", `{"tick":"1s","until":"00:10","tasks":[{"name":"A","interval":"1s","x":1}]}`, []string{"line 1", "tasks[0].x"}},
		{"unknown retry field", base + "  - name: A\n    interval: 1m\n    retry: {max_attempts: 3, backof: 1s}\n", []string{"line 6", "tasks[0].retry.backof", "unknown field", "initial_backoff"}},
		{"retry not a mapping", base + "  - name: A\n    interval: 1m\n    retry: 3\n", []string{"line 6", "tasks[0].retry", "mapping"}},
		{"max_attempts not a number", base + "  - name: A\n    interval: 1m\n    retry: {max_attempts: many}\n", []string{"line 6", "tasks[0].retry.max_attempts", "whole number"}},
		{"bad backoff", base + "  - name: A\n    interval: 1m\n    retry:\n      initial_backoff: 1x\n", []string{"line 7", "tasks[0].retry.initial_backoff", "bad duration"}},
		{"bad multiplier", base + "  - name: A\n    interval: 1m\n    retry: {multiplier: twice}\n", []string{"tasks[0].retry.multiplier", "number"}},
		{"bad start_deadline", base + "  - name: A\n    interval: 1m\n    start_deadline: soon\n", []string{"line 6", "tasks[0].start_deadline", "bad duration"}},
		{"unknown run policy field", base + "  - name: A\n    interval: 1m\n    runs:\n      - {fail: x, fatel: true}\n", []string{"line 7", "tasks[0].runs[0].fatel", "unknown field"}},
		{"fatal not a bool", base + "  - name: A\n    interval: 1m\n    runs:\n      - {fail: x, fatal: yes}\n", []string{"tasks[0].runs[0].fatal", "true or false"}},
		{"fatal without fail", base + "  - name: A\n    interval: 1m\n    runs:\n      - {fatal: true}\n", []string{"tasks[0].runs[0].fatal", "give fail"}},
		{"fatal with panic", base + "  - name: A\n    interval: 1m\n    runs:\n      - {panic: x, fatal: true}\n", []string{"tasks[0].runs[0].fatal", "give fail"}},
		{"zero heartbeat_every", base + "  - name: A\n    interval: 1m\n    runs:\n      - {heartbeat_every: 0s}\n", []string{"tasks[0].runs[0].heartbeat_every", "positive"}},
		{"trigger before create", base + "  - {name: A, interval: 1m, create_at: \"01:00\", trigger_at: [\"00:30\"]}\n", []string{"line 4", "tasks[0].trigger_at[0]", "outside"}},
		{"trigger after delete", base + "  - {name: A, interval: 1m, delete_at: \"01:00\", trigger_at: \"01:00\"}\n", []string{"tasks[0].trigger_at[0]", "outside"}},
		{"triggers out of order", base + "  - {name: A, interval: 1m, trigger_at: [\"01:00\", \"00:30\"]}\n", []string{"tasks[0].trigger_at[1]", "before"}},
		{"bad trigger time", base + "  - {name: A, interval: 1m, trigger_at: soon}\n", []string{"tasks[0].trigger_at", "bad time"}},
		{"backfill window reversed", base + "  - {name: A, interval: 1m, backfill_at: {at: \"02:00\", from: \"01:00\", to: \"00:30\"}}\n", []string{"line 4", "tasks[0].backfill_at.to", "not after from"}},
		{"backfill window in the future", base + "  - {name: A, interval: 1m, backfill_at: {at: \"02:00\", from: \"01:00\", to: \"03:00\"}}\n", []string{"tasks[0].backfill_at.to", "past slots only"}},
		{"backfill without to", base + "  - {name: A, interval: 1m, backfill_at: {at: \"02:00\", from: \"01:00\"}}\n", []string{"tasks[0].backfill_at", "to"}},
		{"backfill unknown key", base + "  - {name: A, interval: 1m, backfill_at: {at: \"02:00\", from: \"01:00\", to: \"01:30\", count: 3}}\n", []string{"count"}},
		{"backfill before create", base + "  - {name: A, interval: 1m, create_at: \"03:00\", backfill_at: {at: \"02:00\", from: \"01:00\", to: \"01:30\"}}\n", []string{"tasks[0].backfill_at.at", "outside"}},
		{"backfills out of order", base + "  - {name: A, interval: 1m, backfill_at: [{at: \"03:00\", from: \"01:00\", to: \"01:30\"}, {at: \"02:00\", from: \"01:00\", to: \"01:30\"}]}\n", []string{"tasks[0].backfill_at[1].at", "before"}},
		{"backfill while down", "tick: 30s\nuntil: \"09:00\"\ndowntime: [{from: \"01:00\", to: \"05:00\"}]\ntasks:\n  - {name: A, interval: 1m, backfill_at: {at: \"02:00\", from: \"00:00\", to: \"00:30\"}}\n", []string{"tasks[0].backfill_at", "down"}},
		{"trigger while down", "tick: 30s\nuntil: \"09:00\"\ndowntime: [{from: \"01:00\", to: \"05:00\"}]\ntasks:\n  - {name: A, interval: 1m, trigger_at: \"02:00\"}\n", []string{"line 5", "tasks[0].trigger_at", "down"}},
		{"max_attempts 0", base + "  - name: A\n    interval: 1m\n    retry:\n      max_attempts: 0\n", []string{"line 7", "tasks[0].retry.max_attempts", "between 1 and 100"}},
		{"max_attempts absurd", base + "  - name: A\n    interval: 1m\n    retry: {max_attempts: 101, initial_backoff: 1s, max_backoff: 1m, multiplier: 2}\n", []string{"line 6", "tasks[0].retry.max_attempts"}},
		{"initial above max backoff", base + "  - name: A\n    interval: 1m\n    retry:\n      max_attempts: 3\n      initial_backoff: 2m\n      max_backoff: 1m\n      multiplier: 2\n", []string{"line 8", "tasks[0].retry.initial_backoff", "max_backoff"}},
		{"zero backoff", base + "  - name: A\n    interval: 1m\n    retry: {max_attempts: 3, max_backoff: 1m, multiplier: 2}\n", []string{"tasks[0].retry.initial_backoff", "positive"}},
		{"multiplier below 1", base + "  - name: A\n    interval: 1m\n    retry: {max_attempts: 3, initial_backoff: 1s, max_backoff: 1m, multiplier: 0.5}\n", []string{"tasks[0].retry.multiplier", "at least 1"}},
		{"unknown missed_run_policy", base + "  - name: A\n    interval: 1m\n    missed_run_policy: later\n", []string{"line 6", "tasks[0].missed_run_policy", "run_once"}},
		{"unknown overlap", base + "  - name: A\n    interval: 1m\n    overlap: queue\n", []string{"line 6", "tasks[0].overlap", "buffer_one"}},
		{"pause_after_failures 0", base + "  - name: A\n    interval: 1m\n    pause_after_failures: 0\n", []string{"line 6", "tasks[0].pause_after_failures", "at least 1"}},
		{"pause_after_failures not a number", base + "  - name: A\n    interval: 1m\n    pause_after_failures: often\n", []string{"line 6", "tasks[0].pause_after_failures", "whole number"}},
		{"start_deadline above timebox", base + "  - name: A\n    interval: 1m\n    timebox: 20s\n    start_deadline: 30s\n", []string{"line 7", "tasks[0].start_deadline", "timebox"}},
		{"heartbeat_timeout above timebox", base + "  - name: A\n    interval: 1m\n    heartbeat_timeout: 31s\n", []string{"line 6", "tasks[0].heartbeat_timeout", "timebox"}},
		{"bad queue name", base + "  - name: A\n    interval: 1m\n    queue: \"a b\"\n", []string{"line 6", "tasks[0].queue"}},
		{"start before a trigger", base + "  - name: A\n    interval: 1m\n    first_run: \"00:30\"\n    trigger_at: \"00:10\"\n    runs:\n      - {start: \"00:05\"}\n", []string{"line 9", "tasks[0].runs[0].start", "00:10"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.text))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrScenario) {
				t.Errorf("error %v does not match ErrScenario", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// The run policy fields (R12–R16) are read as given; a trigger takes the
// place of a run in the earliest-enqueue bound of the runs after it.
func TestParsePolicies(t *testing.T) {
	sc, err := Parse([]byte(`
tick: 10s
until: "05:00"
tasks:
  - name: A
    interval: 1m
    timebox: 30s
    first_run: "01:00"
    queue: reports
    retry: {max_attempts: 3, initial_backoff: 10s, max_backoff: 1m, multiplier: 1.5}
    missed_run_policy: skip
    missed_after: 20s
    start_deadline: 15s
    heartbeat_timeout: 8s
    trigger_at: ["00:20", "00:20", "02:05"]
    runs:
      - {start: "00:20", duration: 10s, fail: "bad input", fatal: true}
      - {start: "00:25"}
      - {start: "01:00", duration: 20s, heartbeat_every: 5s}
      - {fatal: false, fail: x}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := sc.Tasks[0]
	if a.Queue != "reports" || a.Retry == nil || *a.Retry != (scheduler.RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * time.Second, MaxBackoff: time.Minute, Multiplier: 1.5}) ||
		a.MissedRunPolicy != "skip" || a.MissedAfter != 20*time.Second || a.StartDeadline != 15*time.Second || a.HeartbeatTimeout != 8*time.Second {
		t.Fatalf("A = %+v", a)
	}
	if len(a.TriggerAt) != 3 || a.TriggerAt[0] != 20*time.Second || a.TriggerAt[2] != 125*time.Second {
		t.Errorf("trigger_at = %v", a.TriggerAt)
	}
	if r := a.Runs[0]; !r.Fatal || r.Fail != "bad input" {
		t.Errorf("run 1 = %+v", r)
	}
	if r := a.Runs[2]; r.HeartbeatEvery != 5*time.Second || r.Fatal {
		t.Errorf("run 3 = %+v", r)
	}
	if r := a.Runs[3]; r.Fatal {
		t.Errorf("run 4 = %+v", r)
	}
	// Two triggers at 00:20, the first slot at 01:00, then 02:00, the
	// trigger at 02:05, and 03:00.
	got := earliestEnqueues(sc.Tick, false, a, 6)
	want := []time.Duration{20 * time.Second, 20 * time.Second, time.Minute, 2 * time.Minute, 125 * time.Second, 3 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("earliest enqueues %v, want %v", got, want)
			break
		}
	}
	// A task without policy fields has the defaults: nil retry, empty words.
	sc, err = Parse([]byte("tick: 10s\nuntil: \"01:00\"\ntasks: [{name: B, interval: 1m}]"))
	if err != nil {
		t.Fatal(err)
	}
	if b := sc.Tasks[0]; b.Retry != nil || b.Queue != "" || b.MissedRunPolicy != "" || b.StartDeadline != 0 || b.HeartbeatTimeout != 0 || b.TriggerAt != nil {
		t.Errorf("B = %+v", b)
	}
}

func TestTimes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
	}{{"00:00", 0}, {"01:32", 92 * time.Second}, {"90:00", 90 * time.Minute}, {"01:00:05", time.Hour + 5*time.Second}} {
		got, err := ParseTime(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "1", "1:2", "00:5", "-1:00", "00:60", "a:00", "00:00:00:00", "+1:00"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) accepted", bad)
		}
	}
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{0, "00:00"}, {92 * time.Second, "01:32"}, {time.Hour + 5*time.Second, "01:00:05"}, {-5 * time.Second, "-00:05"}} {
		if got := FormatTime(c.d); got != c.want {
			t.Errorf("FormatTime(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// FuzzParse: Parse never panics, every error matches ErrScenario, and what
// it accepts is consistent (positive tick and intervals, tolerances within
// the interval, scripted starts not before their earliest enqueue).
func FuzzParse(f *testing.F) {
	f.Add([]byte(designScenario))
	f.Add([]byte(`{"tick":"1s","until":"01:00:00","tasks":[{"name":"B","interval":"10s"}]}`))
	f.Add([]byte("tick: 10s\nuntil: \"05:00\"\ndowntime: [{from: \"01:00\", to: \"02:00\"}]\ntasks:\n  - {name: A, interval: 1m, pause_at: \"01:00\", resume_at: [\"02:00\"], delete_at: \"04:00\", runs: [{fail: x}, {panic: y, checkpoint: z}]}\n"))
	f.Add([]byte("tick: &a 30s\nuntil: *a\ntasks: [{name: A, interval: *a}]"))
	f.Add([]byte("tick: 10s\nuntil: \"05:00\"\ntasks:\n  - {name: A, interval: 1m, retry: {max_attempts: 3, initial_backoff: 10s, max_backoff: 1m, multiplier: 2}, missed_run_policy: skip, missed_after: 20s, start_deadline: 15s, heartbeat_timeout: 8s, trigger_at: [\"00:20\", \"02:05\"], runs: [{start: \"00:20\", fail: x, fatal: true}, {heartbeat_every: 5s, duration: 20s}]}\n"))
	f.Add([]byte("start: \"2026-03-07T00:00:00Z\"\ntick: 1h\nuntil: \"2026-03-09T08:00:00Z\"\ntasks:\n  - {name: A, cron: [\"0 2 * * *\", \"@hourly\"], timezone: America/New_York, dst_gap: skip, max_runs: 3, jitter: 1m}\n  - {name: B, at: [\"2026-03-07T10:00:00Z\", \"05:00:00\"], start_at: \"01:00\", end_at: \"2026-03-08T00:00:00+01:00\"}\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		sc, err := Parse(text)
		if err != nil {
			if !errors.Is(err, ErrScenario) {
				t.Fatalf("error %v does not match ErrScenario", err)
			}
			return
		}
		if sc.Tick <= 0 || len(sc.Tasks) == 0 {
			t.Fatalf("accepted %+v", sc)
		}
		for _, task := range sc.Tasks {
			kinds := 0
			for _, set := range []bool{task.Interval > 0, len(task.Cron) > 0, len(task.At) > 0} {
				if set {
					kinds++
				}
			}
			interval := task.Interval > 0
			if kinds != 1 || (interval && (task.Interval < time.Second || 2*task.Tolerance >= task.Interval || task.Timebox > task.Interval)) ||
				task.Tolerance < 0 || task.Timebox <= 0 || task.Name == "" || task.MaxRuns < 0 || task.Jitter < 0 {
				t.Fatalf("accepted task %+v", task)
			}
			enq := earliestEnqueues(sc.Tick, len(sc.Downtimes) > 0, task, len(task.Runs))
			for i, r := range task.Runs {
				if r.HasStart && r.Start < enq[i] {
					t.Fatalf("accepted start %v before %v", r.Start, enq[i])
				}
				if (r.Fatal && r.Fail == "") || r.HeartbeatEvery < 0 {
					t.Fatalf("accepted run %+v", r)
				}
			}
			for i, at := range task.TriggerAt {
				if at < task.CreateAt || (task.HasDelete && at >= task.DeleteAt) || (i > 0 && at < task.TriggerAt[i-1]) {
					t.Fatalf("accepted trigger_at %v", task.TriggerAt)
				}
			}
		}
	})
}

// A scenario with a start takes RFC 3339 times, and its tasks every
// schedule field; the scheduler's defaults for a cron task come from its
// spacing.
func TestParseSchedules(t *testing.T) {
	sc, err := Parse([]byte(`
start: "2026-03-07T00:00:00Z"
tick: 1h
until: "2026-03-09T08:00:00Z"
tasks:
  - name: A
    cron: ["0 2 * * *", "0 12 * * SAT"]
    timezone: America/New_York
    dst_gap: skip
    dst_overlap: both
    start_at: "01:00:00"
    end_at: "2026-03-20T00:00:00+01:00"
    max_runs: 4
    jitter: 1m
    create_at: "2026-03-07T00:30:00Z"
  - name: B
    at: ["2026-03-07T10:00:00Z", "05:00:00"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Start.Equal(time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC)) || sc.Until != 56*time.Hour || sc.Origin() != sc.Start {
		t.Fatalf("start %v until %v", sc.Start, sc.Until)
	}
	a, b := sc.Tasks[0], sc.Tasks[1]
	if len(a.Cron) != 2 || a.Timezone != "America/New_York" || a.DSTGap != "skip" || a.DSTOverlap != "both" ||
		a.StartAt != time.Hour || !a.HasStartAt || a.EndAt != 311*time.Hour || a.MaxRuns != 4 || a.Jitter != time.Minute ||
		a.CreateAt != 30*time.Minute || a.Tolerance != 5*time.Second || a.Timebox != 5*time.Hour || a.FirstRun != 7*time.Hour {
		t.Fatalf("A = %+v", a)
	}
	if len(b.At) != 2 || b.At[0] != 10*time.Hour || b.At[1] != 5*time.Hour || b.Timebox != 2*time.Hour+30*time.Minute || b.FirstRun != 5*time.Hour {
		t.Fatalf("B = %+v", b)
	}
	for _, c := range []struct{ text, want string }{
		{"tick: 1s\nuntil: \"2026-03-07T00:00:00Z\"\ntasks: [{name: A, interval: 1m}]", "needs the scenario's start"},
		{"start: tomorrow\ntick: 1s\nuntil: \"01:00\"\ntasks: [{name: A, interval: 1m}]", "start"},
		{"tick: 1s\nuntil: \"01:00\"\ntasks: [{name: A, interval: 1m, cron: \"* * * * *\"}]", "exactly one of interval, cron and at"},
		{"tick: 1s\nuntil: \"01:00\"\ntasks: [{name: A}]", "tasks[0].interval"},
		{"tick: 1s\nuntil: \"01:00\"\ntasks:\n  - name: A\n    cron: \"0 24 * * *\"", "line 5: tasks[0].cron: field 2 (hour): 24 is above 23"},
		{"tick: 1s\nuntil: \"01:00\"\ntasks: [{name: A, cron: \"@daily\", first_run: \"00:30\"}]", "first_run"},
		{"tick: 1s\nuntil: \"01:00\"\ntasks: [{name: A, cron: \"@daily\", timezone: Nowhere/City}]", "tasks[0].timezone"},
		{"start: \"2026-01-01T00:00:00Z\"\ntick: 1s\nuntil: \"01:00\"\ntasks: [{name: A, at: \"2025-01-01T00:00:00Z\"}]", "tasks[0].at: every instant is in the past"},
		{"tick: 1s\nuntil: \"01:00\"\ntasks: [{name: A, cron: \"@daily\", max_runs: -2}]", "max_runs"},
	} {
		_, err := Parse([]byte(c.text))
		if !errors.Is(err, ErrScenario) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}
