package task_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
)

// syncBuffer is a bytes.Buffer the actor's goroutines may write to while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines returns the logged lines that contain msg.
func (s *syncBuffer) lines(msg string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range strings.Split(s.b.String(), "\n") {
		if strings.Contains(l, msg) {
			out = append(out, l)
		}
	}
	return out
}

// wantKeys fails t unless line holds each of kv (key=value pairs of the
// text handler).
func wantKeys(t *testing.T, line string, kv ...string) {
	t.Helper()
	for _, s := range kv {
		if !strings.Contains(line, s) {
			t.Errorf("log line %q lacks %q", line, s)
		}
	}
}

// A run the actor forces to end at its timebox, and a run it drops, are
// each logged once at WARN with the task, the run (ID and number), the
// reason and the numbers the event carries (issue 38 item 11); the
// decisions around them (create, start, complete) log nothing.
func TestForcedEndsAndDropsAreLoggedOnceAtWarn(t *testing.T) {
	logs := &syncBuffer{}
	r := newRig(t, nil)
	r.cfg.Archetype.Logger = slog.New(slog.NewTextHandler(logs, nil))
	a := r.spawn()
	spec := rules.Spec{Name: "A", Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
		Timebox: 30 * time.Second}
	if rep := r.ask(a, task.Command{Cmd: rules.Create{TaskID: r.id, Spec: spec, FirstRun: t0}}); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	r.ask(a, task.Command{Cmd: rules.Tick{}})
	run1 := events.RunID(r.id, 1)
	if rep := r.ask(a, task.Command{Cmd: rules.RequestStart{RunID: run1}}); rep.Err != nil || len(rep.Events) != 1 {
		t.Fatalf("start run 1: %+v", rep)
	}
	r.clk.RunUntil(t0.Add(30 * time.Second)) // its deadline timer forces it to end
	r.clk.Quiesce()

	forced := logs.lines(`msg="run forced to end"`)
	if len(forced) != 1 {
		t.Fatalf("forced end lines: %q, want one", forced)
	}
	wantKeys(t, forced[0], "level=WARN", "task_id="+r.id.String(), "run_id="+run1.String(), "run=1",
		"reason="+events.ForcedTimebox, "deadline=2026-01-01T00:00:30.000Z")

	// Run 2, due at 1 m, starts late at 1m40s and completes; run 3, due
	// at 2 m, asks to start then: 20 s after the last start, where a 1 m
	// interval with 5 s tolerance needs 55 s — dropped, with its numbers.
	r.clk.RunUntil(t0.Add(time.Minute))
	r.ask(a, task.Command{Cmd: rules.Tick{}})
	r.clk.RunUntil(t0.Add(100 * time.Second))
	run2 := events.RunID(r.id, 2)
	if rep := r.ask(a, task.Command{Cmd: rules.RequestStart{RunID: run2}}); rep.Err != nil || len(rep.Events) != 1 {
		t.Fatalf("start run 2: %+v", rep)
	}
	if rep := r.ask(a, task.Command{Cmd: rules.Complete{RunID: run2}}); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	r.clk.RunUntil(t0.Add(2 * time.Minute))
	r.ask(a, task.Command{Cmd: rules.Tick{}})
	run3 := events.RunID(r.id, 3)
	rep := r.ask(a, task.Command{Cmd: rules.RequestStart{RunID: run3}})
	if d, ok := firstEvent(rep.Events).(events.RunDropped); !ok || d.Reason != events.DropTooSoon {
		t.Fatalf("start run 3: %+v, want a too_soon drop", rep.Events)
	}
	r.clk.Quiesce()
	dropped := logs.lines(`msg="run dropped"`)
	if len(dropped) != 1 {
		t.Fatalf("drop lines: %q, want one", dropped)
	}
	wantKeys(t, dropped[0], "level=WARN", "task_id="+r.id.String(), "run_id="+run3.String(), "run=3",
		"reason="+events.DropTooSoon, "last_run=2026-01-01T00:01:40.000Z", "since_last_start=20s", "needed=55s")
	if n := len(logs.lines("level=WARN")); n != 2 {
		t.Errorf("%d WARN lines, want the two above:\n%s", n, strings.Join(logs.lines("level="), "\n"))
	}
}

func firstEvent(evs []events.Event) events.Event {
	if len(evs) == 0 {
		return nil
	}
	return evs[0]
}
