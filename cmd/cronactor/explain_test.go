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
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// TestExplainCommand runs `cronactor explain` against a real HTTP server
// serving a task's events, read from a real store, in the wire form the
// daemon uses.
func TestExplainCommand(t *testing.T) {
	store, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	id := uuid.MustParse("0f6c1d2e-9a3b-4c5d-8e7f-102132435465")
	t0 := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	sec := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var ps []events.Proposed
	for _, e := range []struct {
		at int
		ev events.Event
	}{
		{0, events.TaskCreated{TaskID: id, Name: "A", Owner: "demo/1", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
			Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second), NextRun: sec(30)}},
		{30, events.RunEnqueued{RunID: events.RunID(id, 1), Run: 1, Due: sec(30), NextRun: sec(90)}},
		{90, events.RunEnqueued{RunID: events.RunID(id, 2), Run: 2, Due: sec(90), NextRun: sec(150)}},
		{95, events.RunStarted{RunID: events.RunID(id, 1), Run: 1, Deadline: sec(125)}},
		{123, events.RunDropped{RunID: events.RunID(id, 2), Run: 2, Reason: events.DropTooSoon, Detail: "started 28s after the last start; needs 55s"}},
	} {
		p, err := events.Propose(e.ev, uuid.Nil, sec(e.at))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if _, err := store.Append(context.Background(), events.TaskStream(id), events.NoStream, ps...); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/tasks/"+id.String()+"/events" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"task not found"}`))
			return
		}
		recs, err := store.ReadStream(r.Context(), events.TaskStream(id), 0, 0)
		if err != nil {
			t.Error(err)
		}
		list, err := history.ListJSON(id, recs)
		if err != nil {
			t.Error(err)
		}
		json.NewEncoder(w).Encode(list)
	}))
	defer srv.Close()

	var out, errOut bytes.Buffer
	env := &cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	err = dispatch(context.Background(), env, []string{"explain", id.String(), "--at", "2026-11-22T02:02:03Z", "--server", srv.URL})
	if err != nil {
		t.Fatal(err, errOut.String())
	}
	for _, want := range []string{
		"A1 was running (started 2026-11-22T02:01:35Z, deadline 2026-11-22T02:02:05Z)",
		"2026-11-22T02:02:03Z: A2 was dropped (R3): started 28 s after the last start; needs ≥ 55 s",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	other := uuid.New().String()
	if err := dispatch(context.Background(), env, []string{"explain", other, "--at", "2026-11-22T02:02:03Z", "--server", srv.URL}); err == nil ||
		!strings.Contains(err.Error(), "task not found") {
		t.Errorf("missing task: %v", err)
	}
	for _, args := range [][]string{
		{"explain"}, {"explain", "nope", "--at", "2026-11-22T02:02:03Z"}, {"explain", id.String()},
		{"explain", id.String(), "--at", "02:03"}, {"explain", id.String(), "--at", "2026-11-22T02:02:03Z", "--server", "ftp://x"},
	} {
		if err := dispatch(context.Background(), env, args); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v", args, err)
		}
	}
}
