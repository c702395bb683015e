package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// TestExplainFlagsAroundTheTask: flags before and after TASK all count, and
// a stray argument anywhere is a usage error, never silently ignored.
func TestExplainFlagsAroundTheTask(t *testing.T) {
	id := uuid.MustParse("0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa")
	t0 := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	var recs []events.Recorded
	for i, e := range []struct {
		at time.Duration
		ev events.Event
	}{
		{0, events.TaskCreated{TaskID: id, Name: "A", Owner: "demo/1", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Hour)},
			Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second), NextRun: t0.Add(30 * time.Second)}},
		{30 * time.Second, events.RunEnqueued{RunID: events.RunID(id, 1), Run: 1, Due: t0.Add(30 * time.Second), NextRun: t0.Add(time.Hour)}},
	} {
		p, err := events.Propose(e.ev, uuid.Nil, t0.Add(e.at))
		if err != nil {
			t.Fatal(err)
		}
		pos := events.Position{Commit: uint64(i + 1), Prepare: uint64(i + 1)}
		recs = append(recs, events.Recorded{Metadata: events.Metadata{ID: p.ID, Stream: events.TaskStream(id), Version: uint64(i),
			Position: pos, At: p.At}, Type: p.Type, Schema: p.Schema, Data: p.Data})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		list, err := history.ListJSON(id, recs)
		if err != nil {
			t.Error(err)
		}
		json.NewEncoder(w).Encode(list)
	}))
	defer srv.Close()
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		env := &cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
		err := dispatch(context.Background(), env, append([]string{"explain"}, args...))
		return out.String(), err
	}
	// Explained at 00:40 with a 5 s window, the enqueue at 00:30 is outside
	// the window; with the task's own interval (1 h) as window it is inside.
	at := "2026-11-22T02:00:40Z"
	for _, args := range [][]string{
		{id.String(), "--at", at, "--window", "5s", "--server", srv.URL},
		{"--at", at, id.String(), "--window", "5s", "--server", srv.URL},
		{"--at", at, "--server", srv.URL, "--window", "5s", id.String()},
	} {
		out, err := run(args...)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if !strings.Contains(out, "decisions within 5 s") {
			t.Errorf("%q: --window ignored:\n%s", args, out)
		}
	}
	for _, args := range [][]string{
		{"--at", at, id.String(), "stray", "--server", srv.URL},
		{id.String(), "stray", "--at", at, "--server", srv.URL},
	} {
		if _, err := run(args...); !errors.Is(err, errUsage) {
			t.Errorf("%q: err = %v, want a usage error", args, err)
		}
	}
}
