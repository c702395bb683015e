package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sort"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/httpapi"
	"github.com/google/uuid"
)

// HistoryConfig configures `cronactor bench history`: one old task, its
// stream written straight into a fresh embedded store.
type HistoryConfig struct {
	// Events is the length of the task's stream (N); at least 4.
	Events int
	// Baseline is the length of the young task measured in the same run,
	// the figures' denominator. Default 1000; negative: none.
	Baseline int
	// Page is the rows of the history page read. Default 100.
	Page int
	// Dir is where the stores go (default: a new temporary directory).
	Dir      string
	Progress Progress
}

func (c HistoryConfig) withDefaults() HistoryConfig {
	if c.Baseline == 0 {
		c.Baseline = 1000
	}
	if c.Page == 0 {
		c.Page = 100
	}
	return c
}

// Validate checks the configuration's bounds.
func (c HistoryConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Events < 4 || c.Events > 100_000_000:
		return fmt.Errorf("bench: history: events must be between 4 and 100000000, got %d", c.Events)
	case c.Baseline > 100_000_000 || (c.Baseline > 0 && c.Baseline < 4):
		return fmt.Errorf("bench: history: baseline must be between 4 and 100000000 (or negative: none), got %d", c.Baseline)
	case c.Page < 1 || c.Page > 10000:
		return fmt.Errorf("bench: history: page must be between 1 and 10000, got %d", c.Page)
	}
	return nil
}

// HistoryResult is `cronactor bench history --json` (DESIGN §8.3): for one
// task with Events events, the time to load it cold (a call about the
// resting task to a freshly started scheduler: its actor loads it from the
// store), to read the latest page of its history (GET
// /v1/tasks/{id}/history?limit=Page) and to explain a time in the middle of
// its stream (GET /v1/tasks/{id}/explain): the load timed once, the two
// reads the median of historyCalls calls (the first beside it); and the
// same for a task of Baseline events in the same run, with the ratios.
type HistoryResult struct {
	Events        int     `json:"events"`
	ColdLoadMs    float64 `json:"cold_load_ms"`
	HistoryPageMs float64 `json:"history_page_ms"`
	ExplainMs     float64 `json:"explain_ms"`
	// HistoryPageFirstMs and ExplainFirstMs are the first of the
	// historyCalls calls whose median the figures above are: the first
	// read of the freshly opened store also opens its tables and fills
	// its caches.
	HistoryPageFirstMs float64 `json:"history_page_first_ms"`
	ExplainFirstMs     float64 `json:"explain_first_ms"`
	Page               int     `json:"page"`
	// WriteS is how long writing the stream took (not a figure of the bar).
	WriteS float64 `json:"write_s"`
	// The baseline, measured in the same process on a store of its own.
	BaselineEvents        int     `json:"baseline_events,omitempty"`
	BaselineColdLoadMs    float64 `json:"baseline_cold_load_ms,omitempty"`
	BaselineHistoryPageMs float64 `json:"baseline_history_page_ms,omitempty"`
	BaselineExplainMs     float64 `json:"baseline_explain_ms,omitempty"`
	// Ratios are the figure over its baseline (0 without one).
	ColdLoadRatio    float64 `json:"cold_load_ratio,omitempty"`
	HistoryPageRatio float64 `json:"history_page_ratio,omitempty"`
	ExplainRatio     float64 `json:"explain_ratio,omitempty"`
	LoadAvg1m        float64 `json:"load_avg_1m"`
}

// Text is the result in words.
func (r HistoryResult) Text() string {
	s := fmt.Sprintf("history: a task of %d events: cold load %.1f ms, history page of %d %.1f ms, explain %.1f ms (stream written in %.1f s)",
		r.Events, r.ColdLoadMs, r.Page, r.HistoryPageMs, r.ExplainMs, r.WriteS)
	if r.BaselineEvents > 0 {
		s += fmt.Sprintf("\nhistory: beside a task of %d events: cold load %.1f ms (×%.1f), history page %.1f ms (×%.1f), explain %.1f ms (×%.1f); load avg %.2f",
			r.BaselineEvents, r.BaselineColdLoadMs, r.ColdLoadRatio, r.BaselineHistoryPageMs, r.HistoryPageRatio,
			r.BaselineExplainMs, r.ExplainRatio, r.LoadAvg1m)
	}
	return s
}

// historyFigures are one task's three figures.
type historyFigures struct {
	coldLoadMs, pageMs, explainMs, writeS float64
	pageFirstMs, explainFirstMs           float64
}

// historyCalls is how many times the history page and the explanation are
// read: the figure is the median, the first is reported beside it.
const historyCalls = 5

// History measures cfg's task and its baseline.
func History(ctx context.Context, cfg HistoryConfig) (HistoryResult, error) {
	if err := cfg.Validate(); err != nil {
		return HistoryResult{}, err
	}
	cfg = cfg.withDefaults()
	base, cleanup, err := workDir(cfg.Dir)
	if err != nil {
		return HistoryResult{}, err
	}
	defer cleanup()
	res := HistoryResult{Events: cfg.Events, Page: cfg.Page, LoadAvg1m: loadAverage()}
	if cfg.Baseline > 0 {
		b, err := historyOf(ctx, filepath.Join(base, "baseline"), cfg.Baseline, cfg.Page, cfg.Progress)
		if err != nil {
			return HistoryResult{}, err
		}
		res.BaselineEvents, res.BaselineColdLoadMs, res.BaselineHistoryPageMs, res.BaselineExplainMs = cfg.Baseline, b.coldLoadMs, b.pageMs, b.explainMs
	}
	f, err := historyOf(ctx, filepath.Join(base, "task"), cfg.Events, cfg.Page, cfg.Progress)
	if err != nil {
		return HistoryResult{}, err
	}
	res.ColdLoadMs, res.HistoryPageMs, res.ExplainMs, res.WriteS = f.coldLoadMs, f.pageMs, f.explainMs, f.writeS
	res.HistoryPageFirstMs, res.ExplainFirstMs = f.pageFirstMs, f.explainFirstMs
	if res.BaselineEvents > 0 {
		res.ColdLoadRatio = ratio(res.ColdLoadMs, res.BaselineColdLoadMs)
		res.HistoryPageRatio = ratio(res.HistoryPageMs, res.BaselineHistoryPageMs)
		res.ExplainRatio = ratio(res.ExplainMs, res.BaselineExplainMs)
	}
	return res, nil
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// historyTask is the measured task: every second a run is enqueued,
// started and completed, as a 1 s task's stream grows; every 1000th run
// fails.
var historyT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// writeHistoryTask writes a task of n events into st and returns its ID and
// the decision time of its last event.
func writeHistoryTask(ctx context.Context, st events.Store, n int, progress Progress) (uuid.UUID, time.Time, error) {
	id := uuid.New()
	stream := events.TaskStream(id)
	at := historyT0
	batch := make([]events.Proposed, 0, 3000)
	written := 0
	expected := events.NoStream
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		r, err := st.Append(ctx, stream, expected, batch...)
		if err != nil {
			return err
		}
		expected, written, batch = events.Exactly(r.Version), written+len(batch), batch[:0]
		if written%100_000 < 3000 {
			progress.note("history: %d of %d events written", written, n)
		}
		return nil
	}
	add := func(e events.Event, when time.Time) error {
		p, err := events.Propose(e, uuid.Nil, when)
		if err != nil {
			return err
		}
		batch = append(batch, p)
		if len(batch) == cap(batch) {
			return flush()
		}
		return nil
	}
	if err := add(events.TaskCreated{TaskID: id, Name: "old", Owner: "bench/history", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Second)}, Tolerance: events.Duration(100 * time.Millisecond),
		Timebox: events.Duration(500 * time.Millisecond), NextRun: at.Add(time.Second)}, at); err != nil {
		return id, at, err
	}
	last := at
	for run, left := 1, n-1; left > 0; run++ {
		at = at.Add(time.Second)
		rid := events.RunID(id, run)
		steps := []struct {
			e  events.Event
			at time.Time
		}{
			{events.RunEnqueued{RunID: rid, Run: run, Due: at, NextRun: at.Add(time.Second), Slot: at}, at},
			{events.RunStarted{RunID: rid, Run: run, Deadline: at.Add(510 * time.Millisecond)}, at.Add(10 * time.Millisecond)},
			{events.RunCompleted{RunID: rid, Run: run}, at.Add(20 * time.Millisecond)},
		}
		if run%1000 == 0 {
			steps[2].e = events.RunFailed{RunID: rid, Run: run, Error: "bench: every 1000th run fails"}
		}
		if left < 3 {
			// The stream ends on a whole run: the last one stays waiting.
			steps = steps[:left]
		}
		for _, s := range steps {
			if err := add(s.e, s.at); err != nil {
				return id, at, err
			}
			last = s.at
			left--
		}
	}
	return id, last, flush()
}

// historyOf writes a task of n events in dir and measures it.
func historyOf(ctx context.Context, dir string, n, page int, progress Progress) (historyFigures, error) {
	var f historyFigures
	st, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		return f, err
	}
	t0 := time.Now()
	id, last, err := writeHistoryTask(ctx, st, n, progress)
	if err != nil {
		st.Close()
		return f, err
	}
	f.writeS = time.Since(t0).Seconds()
	// A first scheduler recovers the log and leaves its snapshot at stop,
	// as a daemon that ran the task would have: the measured start reads
	// that, and the task rests.
	progress.note("history: %d events: a first start recovers them", n)
	clk := clock.NewVirtual(last.Add(100 * time.Millisecond))
	if err := startStop(ctx, st, clk); err != nil {
		st.Close()
		return f, err
	}
	if err := st.Close(); err != nil {
		return f, err
	}
	if st, err = embedded.Open(dir, embedded.Options{}); err != nil {
		return f, err
	}
	defer st.Close()
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk})
	if err != nil {
		return f, err
	}
	if err := s.Register("noop", kinds.Noop()); err != nil {
		return f, err
	}
	if err := s.Start(ctx); err != nil {
		return f, err
	}
	defer func() {
		stopCtx, stop := context.WithCancel(context.Background())
		stop()
		_ = s.Stop(stopCtx)
	}()
	progress.note("history: %d events: cold load", n)
	t0 = time.Now()
	if _, err := s.Task(ctx, id); err != nil {
		return f, fmt.Errorf("bench: history: cold load: %w", err)
	}
	f.coldLoadMs = ms(time.Since(t0))

	srv := httptest.NewServer(httpapi.New(httpapi.Config{Scheduler: s, Store: st}))
	defer srv.Close()
	get := func(path string) (time.Duration, error) {
		t0 := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		if err != nil {
			return 0, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("bench: history: GET %s: %s: %s", path, resp.Status, body)
		}
		return time.Since(t0), nil
	}
	// median times path historyCalls times: the median and the first.
	median := func(path string) (med, first float64, err error) {
		var ds []float64
		for range historyCalls {
			d, err := get(path)
			if err != nil {
				return 0, 0, err
			}
			ds = append(ds, ms(d))
		}
		first = ds[0]
		sort.Float64s(ds)
		return ds[len(ds)/2], first, nil
	}
	progress.note("history: %d events: history page", n)
	if f.pageMs, f.pageFirstMs, err = median(fmt.Sprintf("/v1/tasks/%s/history?limit=%d", id, page)); err != nil {
		return f, err
	}
	progress.note("history: %d events: explain", n)
	mid := historyT0.Add(last.Sub(historyT0) / 2).Add(15 * time.Millisecond)
	if f.explainMs, f.explainFirstMs, err = median(fmt.Sprintf("/v1/tasks/%s/explain?at=%s", id, url.QueryEscape(mid.Format(time.RFC3339Nano)))); err != nil {
		return f, err
	}
	return f, nil
}

// startStop starts a scheduler on st and stops it: its recovery, and the
// snapshot it leaves.
func startStop(ctx context.Context, st events.Store, clk clock.Clock) error {
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk})
	if err != nil {
		return err
	}
	if err := s.Register("noop", kinds.Noop()); err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	stopCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if err := s.Stop(stopCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
