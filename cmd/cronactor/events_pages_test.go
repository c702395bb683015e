package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// TestHistoryAndExplainFollowEventPages: GET /v1/tasks/{id}/events answers
// in pages; `history` and `explain` read every page, not just the first.
func TestHistoryAndExplainFollowEventPages(t *testing.T) {
	id := uuid.MustParse("3a6c1d2e-9a3b-4c5d-8e7f-102132435465")
	t0 := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	sec := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var recs []events.Recorded
	for i, e := range []struct {
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
		recs = append(recs, events.Recorded{
			Metadata: events.Metadata{ID: uuid.New(), Stream: events.TaskStream(id), Version: uint64(i),
				Position: events.Position{Commit: uint64(i + 1), Prepare: uint64(i + 1)}, At: p.At},
			Type: p.Type, Schema: p.Schema, Data: p.Data})
	}
	// The server pages by two, as the daemon does by its page size.
	const pageSize = 2
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from := 0
		if a := r.URL.Query().Get("after"); a != "" {
			n, err := strconv.Atoi(a)
			if err != nil {
				t.Errorf("after=%q", a)
			}
			from = n + 1
		}
		page := recs[min(from, len(recs)):min(from+pageSize, len(recs))]
		list, err := history.ListJSON(id, page)
		if err != nil {
			t.Error(err)
		}
		if from+pageSize < len(recs) {
			list.Next = strconv.FormatUint(page[len(page)-1].Version, 10)
		}
		json.NewEncoder(w).Encode(list)
	}))
	defer srv.Close()

	var out, errOut bytes.Buffer
	env := &cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	if err := dispatch(context.Background(), env, []string{"history", id.String(), "--format", "json", "--server", srv.URL}); err != nil {
		t.Fatal(err, errOut.String())
	}
	if n := strings.Count(out.String(), "\n"); n != len(recs) || !strings.Contains(out.String(), `"RunDropped"`) {
		t.Errorf("history printed %d lines, want one per event (%d), the last page included:\n%s", n, len(recs), out.String())
	}

	out.Reset()
	if err := dispatch(context.Background(), env, []string{"explain", id.String(), "--at", "2026-11-22T02:02:03Z", "--server", srv.URL}); err != nil {
		t.Fatal(err, errOut.String())
	}
	if want := "A2 was dropped (R3): started 28 s after the last start; needs ≥ 55 s"; !strings.Contains(out.String(), want) {
		t.Errorf("explain did not read the last page; output lacks %q:\n%s", want, out.String())
	}
}
