package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/httpapi"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// readCounter counts the events a store's stream reads return.
type readCounter struct {
	events.Store
	read atomic.Int64
}

func (c *readCounter) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	recs, err := c.Store.ReadStream(ctx, stream, from, limit)
	c.read.Add(int64(len(recs)))
	return recs, err
}

// `history` shows the latest page of a long task (--limit), says how to
// see the older events, shows them with --before, and `history` and
// `explain` make the daemon read a page and at most cliMaxFold events
// before it, whatever the stream's length.
func TestHistoryPagesFromTheEnd(t *testing.T) {
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := uuid.MustParse("5b6c1d2e-9a3b-4c5d-8e7f-102132435465")
	t0 := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	var ps []events.Proposed
	add := func(at time.Time, e events.Event) {
		p, err := events.Propose(e, uuid.Nil, at)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	add(t0, events.TaskCreated{TaskID: id, Name: "A", Owner: "demo/1", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
		Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second), NextRun: t0.Add(time.Minute)})
	for n := 1; n <= 1500; n++ {
		at := t0.Add(time.Duration(n) * time.Minute)
		rid := events.RunID(id, n)
		add(at, events.RunEnqueued{RunID: rid, Run: n, Due: at, NextRun: at.Add(time.Minute), Slot: at})
		add(at.Add(time.Second), events.RunStarted{RunID: rid, Run: n, Deadline: at.Add(31 * time.Second)})
		add(at.Add(2*time.Second), events.RunCompleted{RunID: rid, Run: n})
	}
	if _, err := st.Append(context.Background(), events.TaskStream(id), events.NoStream, ps...); err != nil {
		t.Fatal(err)
	}
	const n = 4501
	all, _ := st.ReadStream(context.Background(), events.TaskStream(id), 0, 0)
	whole, err := history.Rows(all)
	if err != nil {
		t.Fatal(err)
	}
	c := &readCounter{Store: st}
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: c}))
	defer srv.Close()

	run := func(args ...string) (string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		env := &cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
		c.read.Store(0)
		if err := dispatch(context.Background(), env, append(args, "--server", srv.URL)); err != nil {
			t.Fatalf("%v: %v %s", args, err, errOut.String())
		}
		if got := c.read.Load(); got > int64(cliMaxFold+historyLimit+300) {
			t.Fatalf("%v: the daemon read %d events of %d", args, got, n)
		}
		return out.String(), errOut.String()
	}
	var want bytes.Buffer
	history.WriteLines(&want, whole[n-4:], history.Absolute(), history.LineFields{RunID: true, Detail: true, Retry: true})
	out, hint := run("history", id.String(), "--format", "json", "--limit", "4")
	if out != want.String() {
		t.Fatalf("the latest page:\n%s\nwant\n%s", out, want.String())
	}
	if !strings.Contains(hint, "--before 4497") {
		t.Fatalf("no word of the older events: %q", hint)
	}
	want.Reset()
	history.WriteLines(&want, whole[n-8:n-4], history.Absolute(), history.LineFields{RunID: true, Detail: true, Retry: true})
	if out, _ := run("history", id.String(), "--format", "json", "--limit", "4", "--before", "4497"); out != want.String() {
		t.Fatalf("the page before:\n%s\nwant\n%s", out, want.String())
	}
	want.Reset()
	history.WriteTable(&want, whole[n-1000:], history.Absolute())
	if out, _ := run("history", id.String()); out != want.String() {
		t.Fatalf("the default page is not the latest 1000 rows")
	}

	at := t0.Add(700*time.Minute + 1500*time.Millisecond)
	ex, err := history.Explain(all, at, 0)
	if err != nil {
		t.Fatal(err)
	}
	want.Reset()
	ex.Write(&want, history.Absolute())
	if out, _ := run("explain", id.String(), "--at", at.Format(time.RFC3339Nano)); out != want.String() {
		t.Fatalf("explain:\n%s\nwant\n%s", out, want.String())
	}

	// Past cliMaxFold the CLI folds a look-back, and says so.
	defer func(m int) { cliMaxFold = m }(cliMaxFold)
	cliMaxFold = 1000
	want.Reset()
	history.WriteLines(&want, whole[n-4:], history.Absolute(), history.LineFields{RunID: true, Detail: true, Retry: true})
	out, note := run("history", id.String(), "--format", "json", "--limit", "4")
	if out != want.String() || !strings.Contains(note, "note: the task's stream is long") {
		t.Fatalf("the latest page from a look-back:\n%s\nwant\n%s\nand a note, not %q", out, want.String(), note)
	}
	if _, note := run("explain", id.String(), "--at", at.Format(time.RFC3339Nano)); !strings.Contains(note, "note: the task's stream is long") {
		t.Fatalf("explain from a look-back says %q", note)
	}
	if _, note := run("history", id.String(), "--limit", "4", "--before", "900"); strings.Contains(note, "note:") {
		t.Fatalf("a page within cliMaxFold of the start says %q", note)
	}
}
