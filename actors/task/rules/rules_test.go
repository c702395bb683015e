package rules_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// The rules are tested by data files under testdata/: each directive is a
// command decided against the state the file's earlier directives left,
// and its expected output is the events recorded (or the rejection).
// Times are MM:SS after t0. See testdata/README for the directives; run
// with -rewrite to regenerate the expected output, then review the diff.

var (
	t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	id = uuid.MustParse("aaaaaaaa-0000-0000-0000-000000000001")
)

func TestRules(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if strings.HasSuffix(path, "README") {
			return
		}
		h := &harness{}
		absolute = false
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string { return h.run(t, d) })
	})
}

// harness is one task driven through Decide and Evolve as the actor drives
// it, with every event recorded as the store would.
type harness struct {
	s   rules.State
	log []events.Recorded
}

// absolute: the file writes times as RFC 3339, and they are printed so.
var absolute bool

// clock parses "MM:SS" or "HH:MM:SS" after t0, or an RFC 3339 instant.
func clock(t *testing.T, s string) time.Time {
	t.Helper()
	if strings.Contains(s, "T") {
		x, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatalf("bad time %q: %v", s, err)
		}
		absolute = true
		return x
	}
	parts := strings.Split(s, ":")
	var d time.Duration
	for _, p := range parts {
		var n int
		if _, err := fmt.Sscanf(p, "%d", &n); err != nil {
			t.Fatalf("bad time %q", s)
		}
		d = d*60 + time.Duration(n)
	}
	return t0.Add(d * time.Second)
}

func fmtAt(x time.Time) string {
	if x.IsZero() {
		return "-"
	}
	if absolute {
		return x.UTC().Format(time.RFC3339Nano)
	}
	d := x.Sub(t0)
	if d >= time.Hour {
		return fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
	}
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

func arg(d *datadriven.TestData, key string) (string, bool) {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			if len(a.Vals) == 0 {
				return "", true
			}
			return strings.Join(a.Vals, ","), true
		}
	}
	return "", false
}

func durArg(t *testing.T, d *datadriven.TestData, key string) (time.Duration, bool) {
	v, ok := arg(d, key)
	if !ok {
		return 0, false
	}
	x, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return x, true
}

func intArg(t *testing.T, d *datadriven.TestData, key string) (int, bool) {
	v, ok := arg(d, key)
	if !ok {
		return 0, false
	}
	var n int
	if _, err := fmt.Sscanf(v, "%d", &n); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return n, true
}

func runArg(t *testing.T, d *datadriven.TestData) uuid.UUID {
	n, ok := intArg(t, d, "run")
	if !ok {
		t.Fatalf("%s needs run=N", d.Cmd)
	}
	return events.RunID(id, n)
}

func rawArg(d *datadriven.TestData, key string) json.RawMessage {
	if v, ok := arg(d, key); ok {
		return json.RawMessage(v)
	}
	return nil
}

func ifVersion(t *testing.T, d *datadriven.TestData) *uint64 {
	if n, ok := intArg(t, d, "if_version"); ok {
		v := uint64(n)
		return &v
	}
	return nil
}

// spec reads a create's spec: name A, owner channel/pop3/42, kind noop,
// interval 1m unless given; tolerance given means ToleranceSet.
func spec(t *testing.T, d *datadriven.TestData) rules.Spec {
	s := rules.Spec{Name: "A", Owner: "channel/pop3/42", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)}}
	if v, ok := arg(d, "name"); ok {
		s.Name = v
	}
	if v, ok := arg(d, "owner"); ok {
		s.Owner = v
	}
	if v, ok := arg(d, "kind"); ok {
		s.Kind = v
	}
	if v, ok := durArg(t, d, "interval"); ok {
		s.Schedule.Interval = events.Duration(v)
	}
	if v, ok := durArg(t, d, "tolerance"); ok {
		s.Tolerance, s.ToleranceSet = v, true
	}
	if v, ok := durArg(t, d, "timebox"); ok {
		s.Timebox = v
	}
	if v, ok := intArg(t, d, "priority"); ok {
		s.Priority = v
	}
	if v, ok := arg(d, "cron"); ok {
		s.Schedule = events.Schedule{Cron: cronArg(v)}
	}
	if v, ok := arg(d, "at_list"); ok {
		s.Schedule = events.Schedule{}
		for _, x := range strings.Split(v, ",") {
			s.Schedule.At = append(s.Schedule.At, clock(t, x))
		}
	}
	if v, ok := arg(d, "timezone"); ok {
		s.Schedule.Timezone = v
	}
	if v, ok := arg(d, "dst_gap"); ok {
		s.Schedule.DSTGap = v
	}
	if v, ok := arg(d, "dst_overlap"); ok {
		s.Schedule.DSTOverlap = v
	}
	if v, ok := arg(d, "start_at"); ok {
		s.Window.StartAt = events.TimePtr(clock(t, v))
	}
	if v, ok := arg(d, "end_at"); ok {
		s.Window.EndAt = events.TimePtr(clock(t, v))
	}
	if v, ok := intArg(t, d, "max_runs"); ok {
		s.Window.MaxRuns = v
	}
	if v, ok := durArg(t, d, "jitter"); ok {
		s.Window.Jitter = events.Duration(v)
	}
	if v, ok := intArg(t, d, "max_waiting"); ok {
		s.MaxWaiting = v
	}
	s.Policy = policyArgs(t, d, s.Policy)
	s.Payload = rawArg(d, "payload")
	if n, ok := intArg(t, d, "payload_bytes"); ok {
		s.Payload = json.RawMessage(`"` + strings.Repeat("x", n-2) + `"`)
	}
	return s
}

// policyArgs reads the run policy fields onto p: queue=, max_attempts=,
// initial_backoff=, max_backoff=, multiplier= (any of them makes a retry
// policy), missed_run_policy=, missed_after=, start_deadline=,
// heartbeat_timeout=.
func policyArgs(t *testing.T, d *datadriven.TestData, p events.Policy) events.Policy {
	if v, ok := arg(d, "queue"); ok {
		p.Queue = v
	}
	if r, ok := retryArgs(t, d); ok {
		p.Retry = r
	}
	if v, ok := arg(d, "missed_run_policy"); ok {
		p.MissedRunPolicy = v
	}
	for key, dst := range map[string]*events.Duration{"missed_after": &p.MissedAfter, "start_deadline": &p.StartDeadline,
		"heartbeat_timeout": &p.HeartbeatTimeout} {
		if v, ok := durArg(t, d, key); ok {
			*dst = events.Duration(v)
		}
	}
	return p
}

// retryArgs reads a retry policy: max_attempts=, initial_backoff=,
// max_backoff=, multiplier=.
func retryArgs(t *testing.T, d *datadriven.TestData) (*events.Retry, bool) {
	var r events.Retry
	set := false
	if v, ok := intArg(t, d, "max_attempts"); ok {
		r.MaxAttempts, set = v, true
	}
	if v, ok := durArg(t, d, "initial_backoff"); ok {
		r.InitialBackoff, set = events.Duration(v), true
	}
	if v, ok := durArg(t, d, "max_backoff"); ok {
		r.MaxBackoff, set = events.Duration(v), true
	}
	if v, ok := arg(d, "multiplier"); ok {
		if _, err := fmt.Sscanf(v, "%g", &r.Multiplier); err != nil {
			t.Fatalf("multiplier: %v", err)
		}
		set = true
	}
	return &r, set
}

// cronArg reads cron=: expressions separated by ";", with "_" for the
// spaces between fields (a directive's arguments are split at spaces).
func cronArg(v string) []string {
	l := strings.Split(v, ";")
	for i := range l {
		l[i] = strings.ReplaceAll(l[i], "_", " ")
	}
	return l
}

func (h *harness) command(t *testing.T, d *datadriven.TestData) rules.Command {
	switch d.Cmd {
	case "create":
		c := rules.Create{TaskID: id, Spec: spec(t, d)}
		if v, ok := arg(d, "first_run"); ok && v != "" {
			c.FirstRun = clock(t, v)
		}
		return c
	case "update":
		var c rules.Update
		c.Payload = rawArg(d, "payload")
		if v, ok := durArg(t, d, "interval"); ok {
			c.Interval = &v
		}
		if v, ok := durArg(t, d, "tolerance"); ok {
			c.Tolerance = &v
		}
		if v, ok := durArg(t, d, "timebox"); ok {
			c.Timebox = &v
		}
		if v, ok := intArg(t, d, "priority"); ok {
			c.Priority = &v
		}
		if v, ok := intArg(t, d, "max_waiting"); ok {
			c.MaxWaiting = &v
		}
		if v, ok := arg(d, "next_run"); ok {
			x := clock(t, v)
			c.NextRun = &x
		}
		if v, ok := arg(d, "cron"); ok {
			l := cronArg(v)
			c.Cron = &l
		}
		if v, ok := arg(d, "at_list"); ok {
			var l []time.Time
			for _, x := range strings.Split(v, ",") {
				l = append(l, clock(t, x))
			}
			c.At = &l
		}
		for key, dst := range map[string]**string{"timezone": &c.Timezone, "dst_gap": &c.DSTGap, "dst_overlap": &c.DSTOverlap} {
			if v, ok := arg(d, key); ok {
				*dst = &v
			}
		}
		for key, dst := range map[string]**time.Time{"start_at": &c.StartAt, "end_at": &c.EndAt} {
			if v, ok := arg(d, key); ok {
				var x time.Time
				if v != "-" {
					x = clock(t, v)
				}
				*dst = &x
			}
		}
		if v, ok := intArg(t, d, "max_runs"); ok {
			c.MaxRuns = &v
		}
		if v, ok := durArg(t, d, "jitter"); ok {
			c.Jitter = &v
		}
		if v, ok := arg(d, "queue"); ok {
			c.Queue = &v
		}
		if r, ok := retryArgs(t, d); ok {
			c.Retry = r
		}
		if v, ok := arg(d, "missed_run_policy"); ok {
			c.MissedRunPolicy = &v
		}
		for key, dst := range map[string]**time.Duration{"missed_after": &c.MissedAfter, "start_deadline": &c.StartDeadline,
			"heartbeat_timeout": &c.HeartbeatTimeout} {
			if v, ok := durArg(t, d, key); ok {
				*dst = &v
			}
		}
		c.IfVersion = ifVersion(t, d)
		return c
	case "pause":
		return rules.Pause{IfVersion: ifVersion(t, d)}
	case "resume":
		return rules.Resume{IfVersion: ifVersion(t, d)}
	case "delete":
		r, _ := arg(d, "reason")
		return rules.Delete{Reason: r, IfVersion: ifVersion(t, d)}
	case "tick":
		return rules.Tick{}
	case "start":
		return rules.RequestStart{RunID: runArg(t, d)}
	case "complete":
		return rules.Complete{RunID: runArg(t, d), Checkpoint: rawArg(d, "checkpoint")}
	case "fail":
		e, _ := arg(d, "error")
		_, fatal := arg(d, "fatal")
		return rules.Fail{RunID: runArg(t, d), Error: e, Checkpoint: rawArg(d, "checkpoint"), Fatal: fatal}
	case "trigger":
		return rules.Trigger{}
	case "heartbeat":
		return rules.Heartbeat{RunID: runArg(t, d)}
	case "save":
		return rules.SaveCheckpoint{RunID: runArg(t, d), Checkpoint: rawArg(d, "checkpoint")}
	case "force":
		r, _ := arg(d, "reason")
		c := rules.ForceEnd{RunID: runArg(t, d), Reason: r}
		if v, ok := arg(d, "last_heartbeat"); ok {
			c.LastHeartbeat = clock(t, v)
		}
		return c
	}
	t.Fatalf("unknown directive %q", d.Cmd)
	return nil
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "state":
		return describe(h.s)
	case "reset":
		h.s, h.log = rules.State{}, nil
		return "ok"
	case "replay":
		got, err := rules.Replay(h.log)
		if err != nil {
			return "error: " + err.Error()
		}
		if a, b := stateText(got), stateText(h.s); a != b {
			return "replayed state differs from the live one:\n" + a + "\n" + b
		}
		return "replayed state equals the live one"
	case "defaults":
		sp := spec(t, d)
		if !sp.Schedule.IsInterval() {
			at := t0
			if v, ok := arg(d, "at"); ok {
				at = clock(t, v)
			}
			s, err := rules.Prepare(sp, at)
			out := fmt.Sprintf("tolerance=%s timebox=%s", s.Tolerance, s.Timebox)
			if err != nil {
				out += " invalid: " + err.Error()
			}
			return out
		}
		s := rules.Defaults(sp)
		out := fmt.Sprintf("tolerance=%s timebox=%s", s.Tolerance, s.Timebox)
		if err := rules.Validate(s); err != nil {
			out += " invalid: " + err.Error()
		}
		return out
	case "upcoming":
		at := t0
		if v, ok := arg(d, "at"); ok {
			at = clock(t, v)
		}
		n, _ := intArg(t, d, "count")
		slots, err := rules.Upcoming(h.s, at, n)
		if err != nil {
			return "error: " + err.Error()
		}
		var out []string
		for _, x := range slots {
			out = append(out, x.Format(time.RFC3339))
		}
		if len(out) == 0 {
			return "none"
		}
		return strings.Join(out, "\n")
	}
	at := t0
	if v, ok := arg(d, "at"); ok {
		at = clock(t, v)
	}
	evs, err := rules.Decide(h.s, h.command(t, d), at)
	if err != nil {
		return "error: " + err.Error()
	}
	if len(evs) == 0 {
		return "no events"
	}
	var b strings.Builder
	for _, e := range evs {
		p, err := events.Propose(e, uuid.Nil, at)
		if err != nil {
			t.Fatalf("decided an event the codec refuses: %v", err)
		}
		m := events.Metadata{Stream: events.TaskStream(id), Version: uint64(len(h.log)), At: at}
		h.log = append(h.log, events.Recorded{Metadata: m, Type: p.Type, Schema: p.Schema, Data: p.Data})
		h.s = rules.Evolve(h.s, m, e)
		b.WriteString(render(t, e))
		b.WriteByte('\n')
	}
	return b.String()
}

func checkRun(t *testing.T, rid uuid.UUID, n int) {
	if rid != events.RunID(id, n) {
		t.Fatalf("run %d has ID %s, not the one derived from the task and its number", n, rid)
	}
}

func cp(b json.RawMessage) string {
	if len(b) == 0 {
		return ""
	}
	return " checkpoint=" + string(b)
}

// render prints an event on one line: its type, then its fields.
func render(t *testing.T, e events.Event) string {
	switch e := e.(type) {
	case events.TaskCreated:
		s := fmt.Sprintf("TaskCreated name=%s owner=%s kind=%s %s tolerance=%s timebox=%s priority=%d next_run=%s",
			e.Name, e.Owner, e.Kind, schedText(e.Schedule, e.Window), e.Tolerance, e.Timebox, e.Priority, fmtAt(e.NextRun))
		s += slotText(e.NextRun, e.NextSlot)
		if len(e.Payload) > 0 {
			s += " payload=" + string(e.Payload)
		}
		if e.MaxWaiting != 0 {
			s += fmt.Sprintf(" max_waiting=%d", e.MaxWaiting)
		}
		return s + policyText(e.Policy)
	case events.TaskUpdated:
		s := fmt.Sprintf("TaskUpdated %s tolerance=%s timebox=%s priority=%d next_run=%s",
			schedText(e.Schedule, e.Window), e.Tolerance, e.Timebox, e.Priority, fmtAt(e.NextRun))
		s += slotText(e.NextRun, e.NextSlot)
		if e.Rescheduled {
			s += " rescheduled"
		}
		if len(e.Payload) > 0 {
			s += " payload=" + string(e.Payload)
		}
		if e.MaxWaiting != 0 {
			s += fmt.Sprintf(" max_waiting=%d", e.MaxWaiting)
		}
		return s + policyText(e.Policy)
	case events.TaskPaused:
		return "TaskPaused"
	case events.TaskResumed:
		s := "TaskResumed next_run=" + fmtAt(e.NextRun)
		if e.NextSlot != nil {
			s += " next_slot=" + fmtAt(*e.NextSlot) + " next_spacing=" + e.NextSpacing.String()
		}
		return s
	case events.TaskDeleted:
		return fmt.Sprintf("TaskDeleted reason=%q", e.Reason)
	case events.RunEnqueued:
		checkRun(t, e.RunID, e.Run)
		s := fmt.Sprintf("RunEnqueued run=%d due=%s next_run=%s missed=%d priority=%d", e.Run, fmtAt(e.Due), fmtAt(e.NextRun), e.Missed, e.Priority)
		if !e.Slot.Equal(e.Due) {
			s += " slot=" + fmtAt(e.Slot)
		}
		if e.Spacing != 0 {
			s += " spacing=" + e.Spacing.String()
		}
		s += slotText(e.NextRun, e.NextSlot)
		if e.NextSpacing != 0 {
			s += " next_spacing=" + e.NextSpacing.String()
		}
		if e.Reason != "" {
			s += " reason=" + e.Reason
		}
		if e.Attempt != 0 {
			s += fmt.Sprintf(" attempt=%d", e.Attempt)
		}
		if e.RetryOf != nil {
			s += fmt.Sprintf(" retry_of=%d", runNumber(t, *e.RetryOf))
		}
		if e.Trigger != "" {
			s += " trigger=" + e.Trigger
		}
		return s
	case events.SlotsMissed:
		s := fmt.Sprintf("SlotsMissed due=%s", fmtAt(e.Due))
		if !e.Slot.Equal(e.Due) {
			s += " slot=" + fmtAt(e.Slot)
		}
		s += fmt.Sprintf(" missed=%d missed_after=%s next_run=%s", e.Missed, e.MissedAfter, fmtAt(e.NextRun))
		s += slotText(e.NextRun, e.NextSlot)
		if e.NextSpacing != 0 {
			s += " next_spacing=" + e.NextSpacing.String()
		}
		return s + fmt.Sprintf(" detail=%q", e.Detail)
	case events.TaskFinished:
		return fmt.Sprintf("TaskFinished runs=%d reason=%q", e.Runs, e.Reason)
	case events.RunStarted:
		checkRun(t, e.RunID, e.Run)
		return fmt.Sprintf("RunStarted run=%d deadline=%s", e.Run, fmtAt(e.Deadline))
	case events.RunCompleted:
		checkRun(t, e.RunID, e.Run)
		return fmt.Sprintf("RunCompleted run=%d%s", e.Run, cp(e.Checkpoint))
	case events.RunFailed:
		checkRun(t, e.RunID, e.Run)
		s := fmt.Sprintf("RunFailed run=%d error=%q%s", e.Run, e.Error, cp(e.Checkpoint))
		if e.Fatal {
			s += " fatal"
		}
		return s + retryText(e.RetryAt, e.Backoff, e.NoRetry)
	case events.CheckpointSaved:
		checkRun(t, e.RunID, e.Run)
		return fmt.Sprintf("CheckpointSaved run=%d%s", e.Run, cp(e.Checkpoint))
	case events.RunDropped:
		checkRun(t, e.RunID, e.Run)
		s := fmt.Sprintf("RunDropped run=%d reason=%s", e.Run, e.Reason)
		if e.LastRun != nil {
			s += fmt.Sprintf(" last_run=%s since_last_start=%s needed=%s", fmtAt(*e.LastRun), e.SinceLastStart, e.Needed)
		}
		return s + fmt.Sprintf(" detail=%q", e.Detail)
	case events.RunForcedEnd:
		checkRun(t, e.RunID, e.Run)
		return fmt.Sprintf("RunForcedEnd run=%d reason=%s deadline=%s%s detail=%q", e.Run, e.Reason, fmtAt(e.Deadline), cp(e.Checkpoint), e.Detail) +
			retryText(e.RetryAt, e.Backoff, e.NoRetry)
	}
	t.Fatalf("no rendering for %T", e)
	return ""
}

// retryText prints what a failure says of its retry (R13).
func retryText(at *time.Time, backoff events.Duration, why string) string {
	s := ""
	if at != nil {
		s += fmt.Sprintf(" retry_at=%s backoff=%s", fmtAt(*at), backoff)
	}
	if why != "" {
		s += fmt.Sprintf(" no_retry=%q", why)
	}
	return s
}

// runNumber is the number of the run of the file's task with ID rid.
func runNumber(t *testing.T, rid uuid.UUID) int {
	for n := 1; n < 10000; n++ {
		if events.RunID(id, n) == rid {
			return n
		}
	}
	t.Fatalf("run ID %s is none of the task's", rid)
	return 0
}

// policyText prints a run policy's fields that are set, each as " key=value".
func policyText(p events.Policy) string {
	var b strings.Builder
	if p.Queue != "" {
		b.WriteString(" queue=" + p.Queue)
	}
	if r := p.Retry; r != nil {
		fmt.Fprintf(&b, " retry={max_attempts=%d initial_backoff=%s max_backoff=%s multiplier=%g}", r.MaxAttempts, r.InitialBackoff, r.MaxBackoff, r.Multiplier)
	}
	if p.MissedRunPolicy != "" {
		b.WriteString(" missed_run_policy=" + p.MissedRunPolicy)
	}
	for _, kv := range []struct {
		k string
		v events.Duration
	}{{"missed_after", p.MissedAfter}, {"start_deadline", p.StartDeadline}, {"heartbeat_timeout", p.HeartbeatTimeout}} {
		if kv.v != 0 {
			b.WriteString(" " + kv.k + "=" + kv.v.String())
		}
	}
	return b.String()
}

// schedText prints a schedule as written: "interval=1m0s" for an interval
// task without a window, as before schedules.
func schedText(s events.Schedule, w events.Window) string {
	var b strings.Builder
	switch {
	case len(s.Cron) > 0:
		fmt.Fprintf(&b, "cron=%q", strings.Join(s.Cron, ";"))
	case len(s.At) > 0:
		var l []string
		for _, x := range s.At {
			l = append(l, fmtAt(x))
		}
		b.WriteString("at=" + strings.Join(l, ","))
	default:
		b.WriteString("interval=" + s.Interval.String())
	}
	for _, kv := range [][2]string{{"timezone", s.Timezone}, {"dst_gap", s.DSTGap}, {"dst_overlap", s.DSTOverlap}} {
		if kv[1] != "" {
			b.WriteString(" " + kv[0] + "=" + kv[1])
		}
	}
	if w.StartAt != nil {
		b.WriteString(" start_at=" + fmtAt(*w.StartAt))
	}
	if w.EndAt != nil {
		b.WriteString(" end_at=" + fmtAt(*w.EndAt))
	}
	if w.MaxRuns != 0 {
		fmt.Fprintf(&b, " max_runs=%d", w.MaxRuns)
	}
	if w.Jitter != 0 {
		b.WriteString(" jitter=" + w.Jitter.String())
	}
	return b.String()
}

// slotText prints the slot a nextRun stands for when jitter moved it.
func slotText(next time.Time, slot *time.Time) string {
	if slot == nil {
		return ""
	}
	return " next_slot=" + fmtAt(*slot)
}

// describe prints the state the rules decide against.
func describe(s rules.State) string {
	var open []string
	for _, r := range s.Open {
		st := "waiting"
		if r.Started {
			st = "running since " + fmtAt(r.StartedAt) + " until " + fmtAt(r.Deadline)
		}
		if len(r.Checkpoint) > 0 {
			st += " saved " + string(r.Checkpoint)
		}
		if r.Attempt > 1 {
			st += fmt.Sprintf(", attempt %d, retry of %d", r.Attempt, runNumber(nil, r.RetryOf))
		}
		if r.Trigger != "" {
			st += ", " + r.Trigger
		}
		open = append(open, fmt.Sprintf("%d(incarnation %d, %s)", r.Number, r.Incarnation, st))
	}
	if len(open) == 0 {
		open = []string{"-"}
	}
	c := string(s.Checkpoint)
	if c == "" {
		c = "-"
	}
	payload := string(s.Spec.Payload)
	if payload == "" {
		payload = "-"
	}
	extra := ""
	if !s.Spec.Schedule.IsInterval() || !s.Spec.Window.Equal(events.Window{}) {
		extra = fmt.Sprintf(" next_slot=%s next_spacing=%s scheduled=%d", fmtAt(s.NextSlot), s.NextSpacing, s.Scheduled)
	}
	// R18's fields appear only when they say something, so the data files
	// written before them read the same.
	if s.Backlog {
		extra += " backlog"
	}
	bound := ""
	if s.Spec.MaxWaiting != 0 {
		bound = fmt.Sprintf(" max_waiting=%d", s.Spec.MaxWaiting)
	}
	// The run policy and the pending retries (R12–R16) likewise.
	bound += policyText(s.Spec.Policy)
	retries := ""
	for _, r := range s.Retries {
		retries += fmt.Sprintf("\nretry: of %d attempt %d slot %s at %s", r.Run, r.Attempt, fmtAt(r.Slot), fmtAt(r.At))
	}
	return fmt.Sprintf("status=%s incarnation=%d version=%d next_run=%s last_run=%s runs=%d checkpoint=%s%s\n"+
		"spec: %s tolerance=%s timebox=%s priority=%d payload=%s%s\n"+
		"open: %s%s\n",
		s.Status, s.Incarnation, s.Version, fmtAt(s.NextRun), fmtAt(s.LastRun), s.Runs, c, extra,
		schedText(s.Spec.Schedule, s.Spec.Window), s.Spec.Tolerance, s.Spec.Timebox, s.Spec.Priority, payload, bound, strings.Join(open, ", "), retries)
}

// stateText prints a state whole, the retry policy by value (%+v prints a
// pointer's address).
func stateText(s rules.State) string {
	r := s.Spec.Policy.Retry
	s.Spec.Policy.Retry = nil
	if r != nil {
		return fmt.Sprintf("%+v retry %+v", s, *r)
	}
	return fmt.Sprintf("%+v", s)
}
