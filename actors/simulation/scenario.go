package simulation

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"go.yaml.in/yaml/v3"
)

// ErrScenario marks every error about a scenario's text: its syntax, an
// unknown field, a bad value. The message names the line and field.
var ErrScenario = errors.New("simulation: invalid scenario")

// Owner and Kind are the owner and handler kind of every simulated task.
const (
	Owner = "simulation"
	Kind  = "script"
)

// Scenario is a parsed scenario: what the scheduler is given and how the
// queue and handlers behave. Times are offsets from the simulation start.
type Scenario struct {
	// Start is the instant of 00:00 when the scenario gives one (top-level
	// start, RFC 3339); then every time in the output is an RFC 3339 UTC
	// instant, and the scenario's times may be written as RFC 3339 too.
	// Zero: Epoch, and times are shown as MM:SS.
	Start time.Time
	// Tick is the clock's period; the first tick is one Tick after start.
	Tick time.Duration
	// Until ends the simulation: events up to and including Until are shown.
	Until time.Duration
	// Downtimes stop the scheduler at From and start it again at To from the
	// same store (R8, R9). Sorted, not overlapping.
	Downtimes []Downtime
	Tasks     []TaskScript
}

// Downtime is a span during which the scheduler is stopped.
type Downtime struct {
	From, To time.Duration
	Line     int
}

// TaskScript is one task of a scenario.
type TaskScript struct {
	Name string
	// Interval, or Cron or At (offsets from the start): exactly one is
	// set. Timezone, DSTGap, DSTOverlap and Exclude qualify Cron
	// (docs/schedules.md).
	Interval                     time.Duration
	Cron                         []string
	At                           []time.Duration
	Timezone, DSTGap, DSTOverlap string
	Exclude                      []string
	// StartAt and EndAt (offsets; HasStartAt, HasEndAt say they are set),
	// MaxRuns and Jitter bound the slots of every kind (R10, R17).
	StartAt, EndAt       time.Duration
	HasStartAt, HasEndAt bool
	MaxRuns              int
	Jitter               time.Duration
	// Tolerance and Timebox hold the scheduler's defaults when the scenario
	// gives none: tolerance 5 s or a tenth of the interval when that is
	// smaller, timebox half the interval. A tolerance of 0s is kept.
	Tolerance time.Duration
	Timebox   time.Duration
	// FirstRun is an interval task's initial nextRun; it defaults to
	// CreateAt + Interval, as for a task created without one. HasFirstRun
	// says the scenario gave it.
	FirstRun    time.Duration
	HasFirstRun bool
	// MaxWaiting bounds the task's waiting runs (R18); 0 means the
	// scheduler's default, 3.
	MaxWaiting int
	// Queue, Retry, MissedRunPolicy, MissedAfter, StartDeadline and
	// HeartbeatTimeout are the run policy (R12–R16, docs/policies.md), as
	// scheduler.TaskSpec takes them: zero values are the defaults.
	Queue            string
	Retry            *scheduler.RetryPolicy
	MissedRunPolicy  string
	MissedAfter      time.Duration
	StartDeadline    time.Duration
	HeartbeatTimeout time.Duration
	// Overlap and PauseAfterFailures are DESIGN §8.4's (docs/policies.md):
	// "" is skip, 0 never pauses.
	Overlap            string
	PauseAfterFailures int
	// TriggerAt are the instants of manual triggers (R15), in order.
	TriggerAt []time.Duration
	// Backfills are the backfills asked of the task (DESIGN §8.4), in
	// order: backfill_at, one mapping or a list of them.
	Backfills []Backfill
	// CreateAt is when the task is created; it defaults to the start.
	CreateAt time.Duration
	// PauseAt, ResumeAt and DeleteAt are when the task is paused, resumed
	// and deleted (R7). HasDelete says DeleteAt is set.
	PauseAt   []time.Duration
	ResumeAt  []time.Duration
	DeleteAt  time.Duration
	HasDelete bool
	// Runs script the 1st, 2nd, … enqueued run; later runs are picked up at
	// once and take no time.
	Runs []RunScript
	// Line is where the task starts in the scenario text.
	Line int
}

// Backfill is one backfill_at: at At, the task is asked for a run of each
// of its slots in [From, To) (DESIGN §8.4); From < To <= At.
type Backfill struct {
	At, From, To time.Duration
}

// RunScript says what happens to one enqueued run.
type RunScript struct {
	// Start is when a worker picks the run up (HasStart), or StartDelay
	// after its enqueue; neither: at once.
	Start      time.Duration
	HasStart   bool
	StartDelay time.Duration
	// Duration is how long the handler works (on the virtual clock). A
	// handler still working at its deadline stops there (its context ends)
	// and the run is forced to end.
	Duration time.Duration
	// Fail makes the handler return an error with this message after
	// Duration; Panic makes it panic with this message.
	Fail  string
	Panic string
	// Fatal marks the Fail error as not retryable (R13): the handler
	// returns it wrapped in worker.Permanent.
	Fatal bool
	// HeartbeatEvery, when set, makes the handler heartbeat (R16) at this
	// period on the virtual clock while it works; without it a handler
	// heartbeats only by starting.
	HeartbeatEvery time.Duration
	// Checkpoint is saved by the handler as soon as it starts and returned
	// when it ends (R5).
	Checkpoint string
	Line       int
}

// Parse reads a scenario in YAML (JSON is accepted too, being YAML). It is
// strict: unknown fields, bad durations or times, a start before its run
// can have been enqueued, no tasks or duplicate task names are errors
// matching ErrScenario that name the line and field.
func Parse(text []byte) (*Scenario, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrScenario, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%w: empty scenario", ErrScenario)
	}
	root := doc.Content[0]
	p := &parser{}
	sc := &Scenario{}
	fields, err := p.mapping(root, "", []string{"start", "tick", "until", "tasks", "downtime"})
	if err != nil {
		return nil, err
	}
	if err := p.required(root, "", fields, "tick", "until", "tasks"); err != nil {
		return nil, err
	}
	if v := fields["start"]; v != nil {
		s, err := p.scalar(v, "start")
		if err != nil {
			return nil, err
		}
		if sc.Start, err = time.Parse(time.RFC3339, s); err != nil {
			return nil, p.errf(v, "start", "want an RFC 3339 instant like \"2026-03-08T00:00:00Z\", got %q", s)
		}
		sc.Start = sc.Start.UTC()
		p.start = sc.Start
	}
	if sc.Tick, err = p.duration(fields["tick"], "tick"); err != nil {
		return nil, err
	}
	if sc.Tick <= 0 {
		return nil, p.errf(fields["tick"], "tick", "must be positive")
	}
	if sc.Until, err = p.clock(fields["until"], "until"); err != nil {
		return nil, err
	}
	if dn := fields["downtime"]; dn != nil {
		if sc.Downtimes, err = p.downtimes(dn, sc.Until); err != nil {
			return nil, err
		}
	}
	tn := fields["tasks"]
	if tn.Kind != yaml.SequenceNode {
		return nil, p.errf(tn, "tasks", "want a list of tasks")
	}
	if len(tn.Content) == 0 {
		return nil, p.errf(tn, "tasks", "no tasks")
	}
	names := map[string]int{}
	for i, n := range tn.Content {
		t, err := p.task(n, fmt.Sprintf("tasks[%d]", i), sc)
		if err != nil {
			return nil, err
		}
		if line, dup := names[t.Name]; dup {
			return nil, p.errf(n, fmt.Sprintf("tasks[%d].name", i), "duplicate task name %q (first on line %d)", t.Name, line)
		}
		names[t.Name] = t.Line
		if err := p.actionsUp(n, fmt.Sprintf("tasks[%d]", i), t, sc.Downtimes); err != nil {
			return nil, err
		}
		sc.Tasks = append(sc.Tasks, t)
	}
	return sc, nil
}

// parser reads a scenario; start is its start instant once read (times may
// then be RFC 3339).
type parser struct{ start time.Time }

// Origin is the instant of 00:00: Start, or Epoch when the scenario gives
// none.
func (sc *Scenario) Origin() time.Time {
	if sc.Start.IsZero() {
		return Epoch
	}
	return sc.Start
}

func (p *parser) errf(n *yaml.Node, field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if n != nil && n.Line > 0 {
		return fmt.Errorf("%w: line %d: %s: %s", ErrScenario, n.Line, field, msg)
	}
	return fmt.Errorf("%w: %s: %s", ErrScenario, field, msg)
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// mapping checks n is a mapping with only known keys, each once.
func (p *parser) mapping(n *yaml.Node, field string, known []string) (map[string]*yaml.Node, error) {
	name := field
	if name == "" {
		name = "scenario"
	}
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, name, "want a mapping of fields")
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, p.errf(k, name, "field names must be plain words")
		}
		ok := false
		for _, want := range known {
			ok = ok || k.Value == want
		}
		if !ok {
			sorted := append([]string(nil), known...)
			sort.Strings(sorted)
			return nil, p.errf(k, join(field, k.Value), "unknown field (known: %s)", strings.Join(sorted, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, p.errf(k, join(field, k.Value), "field given twice")
		}
		out[k.Value] = v
	}
	return out, nil
}

func (p *parser) required(n *yaml.Node, field string, fields map[string]*yaml.Node, names ...string) error {
	for _, want := range names {
		if fields[want] == nil {
			return p.errf(n, join(field, want), "required field missing")
		}
	}
	return nil
}

func (p *parser) scalar(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errf(n, field, "want a single value")
	}
	return n.Value, nil
}

func (p *parser) duration(n *yaml.Node, field string) (time.Duration, error) {
	s, err := p.scalar(n, field)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, p.errf(n, field, "bad duration %q: want a Go duration like \"30s\" or \"1m\"", s)
	}
	if d < 0 {
		return 0, p.errf(n, field, "negative duration %q", s)
	}
	return d, nil
}

func (p *parser) clock(n *yaml.Node, field string) (time.Duration, error) {
	s, err := p.scalar(n, field)
	if err != nil {
		return 0, err
	}
	if strings.Contains(s, "T") {
		t, err := time.Parse(time.RFC3339, s)
		switch {
		case err != nil:
			return 0, p.errf(n, field, "bad time %q: want MM:SS, HH:MM:SS or an RFC 3339 instant", s)
		case p.start.IsZero():
			return 0, p.errf(n, field, "an RFC 3339 time %q needs the scenario's start", s)
		case t.Before(p.start):
			return 0, p.errf(n, field, "%s is before the start %s", s, p.start.Format(time.RFC3339))
		}
		return t.Sub(p.start), nil
	}
	d, err := ParseTime(s)
	if err != nil {
		return 0, p.errf(n, field, "%v", err)
	}
	return d, nil
}

// instant reads a time of a task's schedule (at, start_at, end_at): an RFC
// 3339 instant, or a scenario time from the start.
func (p *parser) instant(n *yaml.Node, field string) (time.Time, error) {
	s, err := p.scalar(n, field)
	if err != nil {
		return time.Time{}, err
	}
	if strings.Contains(s, "T") {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return time.Time{}, p.errf(n, field, "bad time %q: want MM:SS, HH:MM:SS or an RFC 3339 instant", s)
		}
		return t.UTC(), nil
	}
	d, err := ParseTime(s)
	if err != nil {
		return time.Time{}, p.errf(n, field, "%v", err)
	}
	origin := p.start
	if origin.IsZero() {
		origin = Epoch
	}
	return origin.Add(d), nil
}

// strings reads a string or a list of strings.
func (p *parser) strings(n *yaml.Node, field string) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		s, err := p.scalar(n, field)
		return []string{s}, err
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, p.errf(n, field, "want a value or a list of values")
	}
	var out []string
	for i, c := range n.Content {
		s, err := p.scalar(c, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *parser) clocks(n *yaml.Node, field string) ([]time.Duration, error) {
	if n.Kind == yaml.ScalarNode {
		d, err := p.clock(n, field)
		return []time.Duration{d}, err
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, field, "want a time or a list of times")
	}
	var out []time.Duration
	for i, c := range n.Content {
		d, err := p.clock(c, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func (p *parser) downtimes(n *yaml.Node, until time.Duration) ([]Downtime, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "downtime", "want a list of {from, to}")
	}
	var out []Downtime
	for i, c := range n.Content {
		field := fmt.Sprintf("downtime[%d]", i)
		f, err := p.mapping(c, field, []string{"from", "to"})
		if err != nil {
			return nil, err
		}
		if err := p.required(c, field, f, "from", "to"); err != nil {
			return nil, err
		}
		var d Downtime
		d.Line = c.Line
		if d.From, err = p.clock(f["from"], field+".from"); err != nil {
			return nil, err
		}
		if d.To, err = p.clock(f["to"], field+".to"); err != nil {
			return nil, err
		}
		if d.To <= d.From {
			return nil, p.errf(f["to"], field+".to", "must be after from")
		}
		if len(out) > 0 && d.From < out[len(out)-1].To {
			return nil, p.errf(f["from"], field+".from", "overlaps the previous downtime")
		}
		if d.From == 0 {
			return nil, p.errf(f["from"], field+".from", "must be after the start")
		}
		out = append(out, d)
	}
	return out, nil
}

func (p *parser) task(n *yaml.Node, field string, sc *Scenario) (TaskScript, error) {
	var t TaskScript
	f, err := p.mapping(n, field, []string{"name", "interval", "tolerance", "timebox", "first_run",
		"create_at", "pause_at", "resume_at", "delete_at", "runs",
		"cron", "at", "timezone", "dst_gap", "dst_overlap", "exclude", "start_at", "end_at", "max_runs", "jitter", "max_waiting",
		"queue", "retry", "missed_run_policy", "missed_after", "start_deadline", "heartbeat_timeout", "trigger_at",
		"overlap", "pause_after_failures", "backfill_at"})
	if err != nil {
		return t, err
	}
	if err := p.required(n, field, f, "name"); err != nil {
		return t, err
	}
	t.Line = n.Line
	if t.Name, err = p.scalar(f["name"], field+".name"); err != nil {
		return t, err
	}
	if t.Name == "" {
		return t, p.errf(f["name"], field+".name", "empty name")
	}
	kinds := 0
	for _, k := range []string{"interval", "cron", "at"} {
		if f[k] != nil {
			kinds++
		}
	}
	switch {
	case kinds == 0:
		return t, p.errf(n, field+".interval", "required field missing (or give cron or at)")
	case kinds > 1:
		return t, p.errf(n, field, "give exactly one of interval, cron and at")
	}
	if v := f["interval"]; v != nil {
		if t.Interval, err = p.duration(v, field+".interval"); err != nil {
			return t, err
		}
		if t.Interval <= 0 {
			return t, p.errf(v, field+".interval", "must be positive")
		}
	}
	if v := f["cron"]; v != nil {
		if t.Cron, err = p.strings(v, field+".cron"); err != nil {
			return t, err
		}
	}
	if v := f["exclude"]; v != nil {
		if t.Exclude, err = p.strings(v, field+".exclude"); err != nil {
			return t, err
		}
	}
	var at []time.Time
	if v := f["at"]; v != nil {
		nodes := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			nodes = v.Content
		}
		for i, c := range nodes {
			x, err := p.instant(c, fmt.Sprintf("%s.at[%d]", field, i))
			if err != nil {
				return t, err
			}
			at = append(at, x)
		}
		if len(at) == 0 {
			return t, p.errf(v, field+".at", "want a time or a list of times")
		}
	}
	for _, k := range []struct {
		name string
		dst  *string
	}{{"timezone", &t.Timezone}, {"dst_gap", &t.DSTGap}, {"dst_overlap", &t.DSTOverlap}} {
		if v := f[k.name]; v != nil {
			if *k.dst, err = p.scalar(v, field+"."+k.name); err != nil {
				return t, err
			}
		}
	}
	var startAt, endAt time.Time
	if v := f["start_at"]; v != nil {
		if startAt, err = p.instant(v, field+".start_at"); err != nil {
			return t, err
		}
	}
	if v := f["end_at"]; v != nil {
		if endAt, err = p.instant(v, field+".end_at"); err != nil {
			return t, err
		}
	}
	if v := f["max_runs"]; v != nil {
		s, err := p.scalar(v, field+".max_runs")
		if err != nil {
			return t, err
		}
		if t.MaxRuns, err = strconv.Atoi(s); err != nil || t.MaxRuns < 0 {
			return t, p.errf(v, field+".max_runs", "want a whole number, 0 or more, got %q", s)
		}
	}
	if v := f["jitter"]; v != nil {
		if t.Jitter, err = p.duration(v, field+".jitter"); err != nil {
			return t, err
		}
	}
	tolSet := f["tolerance"] != nil
	if tolSet {
		if t.Tolerance, err = p.duration(f["tolerance"], field+".tolerance"); err != nil {
			return t, err
		}
	}
	if v := f["timebox"]; v != nil {
		if t.Timebox, err = p.duration(v, field+".timebox"); err != nil {
			return t, err
		}
		if t.Timebox == 0 {
			return t, p.errf(v, field+".timebox", "must be positive (leave it out for the default)")
		}
	}
	if v := f["create_at"]; v != nil {
		if t.CreateAt, err = p.clock(v, field+".create_at"); err != nil {
			return t, err
		}
	}
	origin := sc.Origin()
	for _, x := range at {
		t.At = append(t.At, x.Sub(origin))
	}
	if !startAt.IsZero() {
		t.StartAt, t.HasStartAt = startAt.Sub(origin), true
	}
	if !endAt.IsZero() {
		t.EndAt, t.HasEndAt = endAt.Sub(origin), true
	}
	if v := f["max_waiting"]; v != nil {
		s, err := p.scalar(v, field+".max_waiting")
		if err != nil {
			return t, err
		}
		if t.MaxWaiting, err = strconv.Atoi(s); err != nil || t.MaxWaiting < 1 {
			return t, p.errf(v, field+".max_waiting", "want a whole number of runs, at least 1, got %q", s)
		}
	}
	if err := p.policy(f, field, &t); err != nil {
		return t, err
	}
	// The scheduler's own defaults and limits, so that a scenario it would
	// refuse is refused here with a line.
	spec, err := rules.Prepare(rules.Spec{Name: t.Name, Owner: Owner, Kind: Kind,
		Schedule: events.Schedule{Interval: events.Duration(t.Interval), Cron: t.Cron, At: at, Timezone: t.Timezone,
			DSTGap: t.DSTGap, DSTOverlap: t.DSTOverlap, Exclude: t.Exclude},
		Window:    events.Window{StartAt: events.TimePtr(startAt), EndAt: events.TimePtr(endAt), MaxRuns: t.MaxRuns, Jitter: events.Duration(t.Jitter)},
		Tolerance: t.Tolerance, ToleranceSet: tolSet, Timebox: t.Timebox, MaxWaiting: t.MaxWaiting,
		Policy: t.policy()}, origin.Add(t.CreateAt))
	if err != nil {
		var fe *rules.FieldError
		node := n
		if errors.As(err, &fe) {
			name, _, _ := strings.Cut(fe.Field, "[")
			name, sub, _ := strings.Cut(name, ".")
			if f[name] != nil {
				node = f[name]
				if sub != "" && node.Kind == yaml.MappingNode {
					for i := 0; i+1 < len(node.Content); i += 2 {
						if node.Content[i].Value == sub {
							node = node.Content[i+1]
						}
					}
				}
			}
		}
		if fe != nil {
			return t, p.errf(node, field+"."+fe.Field, "%s", fe.Message)
		}
		return t, p.errf(node, field, "%v", err)
	}
	t.Tolerance, t.Timebox = spec.Tolerance, spec.Timebox
	t.FirstRun = t.CreateAt + t.Interval
	if v := f["first_run"]; v != nil {
		if t.Interval == 0 {
			return t, p.errf(v, field+".first_run", "applies to interval tasks; a cron or at task starts at its first slot (use start_at)")
		}
		if t.FirstRun, err = p.clock(v, field+".first_run"); err != nil {
			return t, err
		}
		t.HasFirstRun = true
	}
	if t.Interval == 0 {
		// The first slot bounds the first enqueue (earliestEnqueues).
		first, _ := rules.Upcoming(rules.State{Status: rules.StatusActive, Spec: spec}, origin.Add(t.CreateAt), 1)
		if len(first) == 1 {
			t.FirstRun = first[0].Sub(origin)
		}
	}
	if v := f["pause_at"]; v != nil {
		if t.PauseAt, err = p.clocks(v, field+".pause_at"); err != nil {
			return t, err
		}
	}
	if v := f["resume_at"]; v != nil {
		if t.ResumeAt, err = p.clocks(v, field+".resume_at"); err != nil {
			return t, err
		}
	}
	if v := f["delete_at"]; v != nil {
		if t.DeleteAt, err = p.clock(v, field+".delete_at"); err != nil {
			return t, err
		}
		t.HasDelete = true
	}
	for _, at := range [][]time.Duration{t.PauseAt, t.ResumeAt} {
		for _, d := range at {
			if d < t.CreateAt || (t.HasDelete && d >= t.DeleteAt) {
				return t, p.errf(n, field, "pause or resume at %s outside the task's life", FormatTime(d))
			}
		}
	}
	if t.HasDelete && t.DeleteAt < t.CreateAt {
		return t, p.errf(f["delete_at"], field+".delete_at", "before create_at")
	}
	if v := f["trigger_at"]; v != nil {
		if t.TriggerAt, err = p.clocks(v, field+".trigger_at"); err != nil {
			return t, err
		}
		for i, at := range t.TriggerAt {
			switch {
			case at < t.CreateAt || (t.HasDelete && at >= t.DeleteAt):
				return t, p.errf(v, fmt.Sprintf("%s.trigger_at[%d]", field, i), "trigger at %s outside the task's life", FormatTime(at))
			case i > 0 && at < t.TriggerAt[i-1]:
				return t, p.errf(v, fmt.Sprintf("%s.trigger_at[%d]", field, i), "%s is before the trigger before it", FormatTime(at))
			}
		}
	}
	if v := f["backfill_at"]; v != nil {
		if t.Backfills, err = p.backfills(v, field+".backfill_at", t); err != nil {
			return t, err
		}
	}
	if v := f["runs"]; v != nil {
		if v.Kind != yaml.SequenceNode {
			return t, p.errf(v, field+".runs", "want a list of runs")
		}
		enq := earliestEnqueues(sc.Tick, len(sc.Downtimes) > 0, t, len(v.Content))
		for i, c := range v.Content {
			r, err := p.run(c, fmt.Sprintf("%s.runs[%d]", field, i))
			if err != nil {
				return t, err
			}
			if r.HasStart && r.Start < enq[i] {
				return t, p.errf(c, fmt.Sprintf("%s.runs[%d].start", field, i),
					"%s is before run %d of %s can be enqueued (%s at the earliest)", FormatTime(r.Start), i+1, t.Name, FormatTime(enq[i]))
			}
			t.Runs = append(t.Runs, r)
		}
	}
	return t, nil
}

// backfills reads backfill_at: {at, from, to}, or a list of them in
// order of at, each within the task's life and with from < to <= at.
func (p *parser) backfills(n *yaml.Node, field string, t TaskScript) ([]Backfill, error) {
	items := []*yaml.Node{n}
	list := n.Kind == yaml.SequenceNode
	if list {
		items = n.Content
	}
	var out []Backfill
	for i, c := range items {
		name := field
		if list {
			name = fmt.Sprintf("%s[%d]", field, i)
		}
		f, err := p.mapping(c, name, []string{"at", "from", "to"})
		if err != nil {
			return nil, err
		}
		if err := p.required(c, name, f, "at", "from", "to"); err != nil {
			return nil, err
		}
		var b Backfill
		for _, x := range []struct {
			key string
			d   *time.Duration
		}{{"at", &b.At}, {"from", &b.From}, {"to", &b.To}} {
			if *x.d, err = p.clock(f[x.key], name+"."+x.key); err != nil {
				return nil, err
			}
		}
		switch {
		case b.At < t.CreateAt || (t.HasDelete && b.At >= t.DeleteAt):
			return nil, p.errf(f["at"], name+".at", "backfill at %s outside the task's life", FormatTime(b.At))
		case b.From >= b.To:
			return nil, p.errf(f["to"], name+".to", "%s is not after from %s (the window is [from, to))", FormatTime(b.To), FormatTime(b.From))
		case b.To > b.At:
			return nil, p.errf(f["to"], name+".to", "%s is after at %s: a backfill asks for past slots only", FormatTime(b.To), FormatTime(b.At))
		case len(out) > 0 && b.At < out[len(out)-1].At:
			return nil, p.errf(f["at"], name+".at", "%s is before the backfill before it", FormatTime(b.At))
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, p.errf(n, field, "want {at, from, to} or a list of them")
	}
	return out, nil
}

// earliestEnqueues returns the earliest time each of the first n runs of t
// can be enqueued: at the first tick at or after nextRun, with nextRun then
// moving to that tick + interval (R1), merged with the manual triggers,
// which enqueue at their instant (R15). Pauses only delay runs; retries
// (R13) only take numbers, so that later runs come later still. A restart
// after downtime starts a new tick sequence, so with downtime the bound is
// nextRun itself.
func earliestEnqueues(tick time.Duration, downtime bool, t TaskScript, n int) []time.Duration {
	out := make([]time.Duration, n)
	next := t.FirstRun
	trig := t.TriggerAt
	for i := range out {
		at := max(next, t.CreateAt, tick)
		if !downtime {
			at = ceilTick(at, tick)
		}
		if len(trig) > 0 && trig[0] <= at {
			out[i], trig = trig[0], trig[1:]
			continue
		}
		if len(t.Backfills) > 0 && t.Backfills[0].At <= at {
			// A backfill may enqueue any number of runs from its instant
			// on (as room frees up): every later run may be one of them.
			out[i] = t.Backfills[0].At
			continue
		}
		out[i] = at
		// A cron or at task's later slots are not worked out here: its
		// first bounds them all (the run checks each start again).
		next = at + t.Interval
	}
	return out
}

// ceilTick is the first tick at or after d (ticks fall on whole multiples
// of tick, the first one tick after start).
func ceilTick(d, tick time.Duration) time.Duration {
	if d <= tick {
		return tick
	}
	return (d + tick - 1) / tick * tick
}

func (p *parser) run(n *yaml.Node, field string) (RunScript, error) {
	var r RunScript
	f, err := p.mapping(n, field, []string{"start", "start_delay", "duration", "fail", "panic", "checkpoint", "fatal", "heartbeat_every"})
	if err != nil {
		return r, err
	}
	r.Line = n.Line
	if f["start"] != nil && f["start_delay"] != nil {
		return r, p.errf(f["start_delay"], field+".start_delay", "give start or start_delay, not both")
	}
	if v := f["start"]; v != nil {
		if r.Start, err = p.clock(v, field+".start"); err != nil {
			return r, err
		}
		r.HasStart = true
	}
	if v := f["start_delay"]; v != nil {
		if r.StartDelay, err = p.duration(v, field+".start_delay"); err != nil {
			return r, err
		}
	}
	if v := f["duration"]; v != nil {
		if r.Duration, err = p.duration(v, field+".duration"); err != nil {
			return r, err
		}
	}
	if f["fail"] != nil && f["panic"] != nil {
		return r, p.errf(f["panic"], field+".panic", "give fail or panic, not both")
	}
	if v := f["fatal"]; v != nil {
		if r.Fatal, err = p.bool(v, field+".fatal"); err != nil {
			return r, err
		}
		if r.Fatal && f["fail"] == nil {
			return r, p.errf(v, field+".fatal", "marks the fail error as not retryable: give fail too")
		}
	}
	if v := f["heartbeat_every"]; v != nil {
		if r.HeartbeatEvery, err = p.duration(v, field+".heartbeat_every"); err != nil {
			return r, err
		}
		if r.HeartbeatEvery == 0 {
			return r, p.errf(v, field+".heartbeat_every", "must be positive (leave it out for no heartbeats)")
		}
	}
	for _, k := range []struct {
		name string
		dst  *string
	}{{"fail", &r.Fail}, {"panic", &r.Panic}, {"checkpoint", &r.Checkpoint}} {
		if v := f[k.name]; v != nil {
			if *k.dst, err = p.scalar(v, field+"."+k.name); err != nil {
				return r, err
			}
			if *k.dst == "" {
				return r, p.errf(v, field+"."+k.name, "empty")
			}
			if k.name == "checkpoint" && !json.Valid([]byte(*k.dst)) {
				return r, p.errf(v, field+".checkpoint", "must be JSON, like '{\"page\":3}'")
			}
		}
	}
	return r, nil
}

// ParseTime parses a scenario time, MM:SS or HH:MM:SS from the start.
// Minutes and seconds after the first part are 00..59; the first part may
// be larger ("90:00" is an hour and a half).
func ParseTime(s string) (time.Duration, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("bad time %q: want MM:SS or HH:MM:SS", s)
	}
	var total int64
	for i, part := range parts {
		if part == "" || len(part) > 4 || strings.TrimLeft(part, "0123456789") != "" {
			return 0, fmt.Errorf("bad time %q: want MM:SS or HH:MM:SS", s)
		}
		v, _ := strconv.ParseInt(part, 10, 64)
		if i > 0 && (v > 59 || len(part) != 2) {
			return 0, fmt.Errorf("bad time %q: %q must be two digits 00..59", s, part)
		}
		total = total*60 + v
	}
	return time.Duration(total) * time.Second, nil
}

// FormatTime renders an offset from the start as MM:SS, or HH:MM:SS from
// one hour on (whole seconds; the form ParseTime reads).
func FormatTime(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	s := int64(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%s%02d:%02d:%02d", sign, s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%s%02d:%02d", sign, s/60, s%60)
}

// actionsUp refuses a scripted action while the scheduler is down: there is
// no process to take it.
func (p *parser) actionsUp(n *yaml.Node, field string, t TaskScript, downs []Downtime) error {
	check := func(name string, at time.Duration) error {
		for _, d := range downs {
			if at > d.From && at < d.To {
				return p.errf(n, field+"."+name, "%s falls while the scheduler is down (%s to %s)", FormatTime(at), FormatTime(d.From), FormatTime(d.To))
			}
		}
		return nil
	}
	if err := check("create_at", t.CreateAt); err != nil {
		return err
	}
	for _, at := range t.PauseAt {
		if err := check("pause_at", at); err != nil {
			return err
		}
	}
	for _, at := range t.ResumeAt {
		if err := check("resume_at", at); err != nil {
			return err
		}
	}
	for _, at := range t.TriggerAt {
		if err := check("trigger_at", at); err != nil {
			return err
		}
	}
	for _, b := range t.Backfills {
		if err := check("backfill_at", b.At); err != nil {
			return err
		}
	}
	if t.HasDelete {
		return check("delete_at", t.DeleteAt)
	}
	return nil
}

func (p *parser) bool(n *yaml.Node, field string) (bool, error) {
	s, err := p.scalar(n, field)
	if err != nil {
		return false, err
	}
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, p.errf(n, field, "want true or false, got %q", s)
}

// policy reads a task's run policy fields (R12–R16). Their limits are the
// scheduler's, checked by rules.Prepare with the rest of the spec.
func (p *parser) policy(f map[string]*yaml.Node, field string, t *TaskScript) error {
	var err error
	for _, k := range []struct {
		name string
		dst  *string
	}{{"queue", &t.Queue}, {"missed_run_policy", &t.MissedRunPolicy}, {"overlap", &t.Overlap}} {
		if v := f[k.name]; v != nil {
			if *k.dst, err = p.scalar(v, field+"."+k.name); err != nil {
				return err
			}
		}
	}
	for _, k := range []struct {
		name string
		dst  *time.Duration
	}{{"missed_after", &t.MissedAfter}, {"start_deadline", &t.StartDeadline}, {"heartbeat_timeout", &t.HeartbeatTimeout}} {
		if v := f[k.name]; v != nil {
			if *k.dst, err = p.duration(v, field+"."+k.name); err != nil {
				return err
			}
		}
	}
	if n := f["pause_after_failures"]; n != nil {
		s, err := p.scalar(n, field+".pause_after_failures")
		if err != nil {
			return err
		}
		if t.PauseAfterFailures, err = strconv.Atoi(s); err != nil || t.PauseAfterFailures < 1 {
			return p.errf(n, field+".pause_after_failures", "want a whole number of at least 1, got %q", s)
		}
	}
	v := f["retry"]
	if v == nil {
		return nil
	}
	rf, err := p.mapping(v, field+".retry", []string{"max_attempts", "initial_backoff", "max_backoff", "multiplier"})
	if err != nil {
		return err
	}
	r := &scheduler.RetryPolicy{}
	if n := rf["max_attempts"]; n != nil {
		s, err := p.scalar(n, field+".retry.max_attempts")
		if err != nil {
			return err
		}
		if r.MaxAttempts, err = strconv.Atoi(s); err != nil {
			return p.errf(n, field+".retry.max_attempts", "want a whole number, got %q", s)
		}
	}
	for _, k := range []struct {
		name string
		dst  *time.Duration
	}{{"initial_backoff", &r.InitialBackoff}, {"max_backoff", &r.MaxBackoff}} {
		if n := rf[k.name]; n != nil {
			if *k.dst, err = p.duration(n, field+".retry."+k.name); err != nil {
				return err
			}
		}
	}
	if n := rf["multiplier"]; n != nil {
		s, err := p.scalar(n, field+".retry.multiplier")
		if err != nil {
			return err
		}
		if r.Multiplier, err = strconv.ParseFloat(s, 64); err != nil || math.IsNaN(r.Multiplier) || math.IsInf(r.Multiplier, 0) {
			return p.errf(n, field+".retry.multiplier", "want a number like 2 or 1.5, got %q", s)
		}
	}
	t.Retry = r
	return nil
}

// policy is the task's run policy as the events record it.
func (t TaskScript) policy() events.Policy {
	pol := events.Policy{Queue: t.Queue, MissedRunPolicy: t.MissedRunPolicy, MissedAfter: events.Duration(t.MissedAfter),
		StartDeadline: events.Duration(t.StartDeadline), HeartbeatTimeout: events.Duration(t.HeartbeatTimeout),
		Overlap: t.Overlap, PauseAfterFailures: t.PauseAfterFailures}
	if r := t.Retry; r != nil {
		pol.Retry = &events.Retry{MaxAttempts: r.MaxAttempts, InitialBackoff: events.Duration(r.InitialBackoff),
			MaxBackoff: events.Duration(r.MaxBackoff), Multiplier: r.Multiplier}
	}
	return pol
}
