package simulation_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/simulation"
)

// R5: the checkpoint A1 saved before it was forced to end is what A2 is
// handed.
func TestCheckpointHandedOn(t *testing.T) {
	res := simulate(t, "testdata/r4_r5_forced_end.yaml")
	got := res.Received[0]
	if got[1] != "" {
		t.Errorf("A1 was handed %q, want no checkpoint", got[1])
	}
	if got[2] != `{"page":3}` {
		t.Errorf("A2 was handed %q, want the checkpoint A1 saved before its forced end", got[2])
	}
}

// A scripted start that a pause pushed before the run's real enqueue is an
// error naming the line, found while running.
func TestStartBeforeActualEnqueue(t *testing.T) {
	sc, err := simulation.Parse([]byte(`
tick: 30s
until: "05:00"
tasks:
  - name: A
    interval: 1m
    first_run: "00:30"
    pause_at: "00:10"
    resume_at: "02:00"
    runs:
      - {start: "00:40"}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = simulation.Run(context.Background(), sc, simulation.Options{})
	if !errors.Is(err, simulation.ErrScript) || !strings.Contains(err.Error(), "line 11") || !strings.Contains(err.Error(), "tasks[0].runs[0].start") {
		t.Fatalf("err = %v, want ErrScript naming line 11 and the field", err)
	}
}

// A trigger the scheduler refuses (R15: the task is paused) stops the
// simulation with an error naming the field and the reason; two triggers
// at one instant are two runs.
func TestTriggerRefusedAndRepeated(t *testing.T) {
	sc, err := simulation.Parse([]byte(`
tick: 30s
until: "02:00"
tasks:
  - name: A
    interval: 1m
    pause_at: "00:50"
    trigger_at: ["00:10", "00:10", "01:00"]
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = simulation.Run(context.Background(), sc, simulation.Options{})
	if !errors.Is(err, simulation.ErrScript) || !strings.Contains(err.Error(), "tasks[0].trigger_at[2] at 01:00") || !strings.Contains(err.Error(), "paused") {
		t.Fatalf("err = %v, want ErrScript naming trigger_at[2] and the pause", err)
	}
	sc.Tasks[0].TriggerAt = sc.Tasks[0].TriggerAt[:2]
	res, err := simulation.Run(context.Background(), sc, simulation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	triggered := 0
	for _, e := range res.Entries {
		if e.Record.Type == "RunEnqueued" && e.At.Equal(simulation.Epoch.Add(10*time.Second)) {
			triggered++
		}
	}
	if triggered != 2 {
		t.Errorf("%d runs enqueued at 00:10, want 2 (one per trigger)", triggered)
	}
}

// A crash at an instant and a restart at once change nothing a run could
// see when nothing was in flight and the new clock ticks on the same beat:
// the worked example with a crash and restart at 01:00
// prints the same rows.
func TestCrashWhenIdle(t *testing.T) {
	text := mustRead(t, "testdata/worked_example.yaml")
	sc, err := simulation.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := simulation.Run(context.Background(), sc, simulation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	crashed, err := simulation.Run(context.Background(), sc, simulation.Options{Crashes: []time.Duration{60 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	var a, b strings.Builder
	if err := render(&a, plain.Entries, "json"); err != nil {
		t.Fatal(err)
	}
	if err := render(&b, crashed.Entries, "json"); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("with a crash at 01:00:\n%s\nwithout:\n%s", b.String(), a.String())
	}
	if len(crashed.Lives) != 2 {
		t.Errorf("lives = %+v", crashed.Lives)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
