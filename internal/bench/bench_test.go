package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events/postgres/pgtest"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

func TestConfigsNameTheFieldOutOfLimits(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{StoreConfig{Writers: -1, Duration: time.Second}.Validate(), "Writers"},
		{StoreConfig{Duration: time.Millisecond}.Validate(), "Duration"},
		{SchedulerConfig{Tasks: 0, Workers: 1}.Validate(), "Tasks"},
		{SchedulerConfig{Tasks: 1, Workers: 0}.Validate(), "Workers"},
		{ProjectionsConfig{Writers: 1, Rounds: 0, Duration: time.Second}.Validate(), "Rounds"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("err = %v, want one naming %s", c.err, c.want)
		}
	}
}

// TestStoreSmoke runs the smallest store measurement: it checks the shape
// of the result, not its figures.
func TestStoreSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("writes to disk")
	}
	var got []StoreResult
	var notes int
	cfg := StoreConfig{Writers: 2, Duration: 100 * time.Millisecond, Dir: t.TempDir(),
		Progress: func(string, ...any) { notes++ }}
	if err := Store(context.Background(), cfg, func(r StoreResult) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Writers != 2 || got[0].Events == 0 || got[0].EventSizeBytes != EventSize || notes == 0 {
		t.Fatalf("results %+v, %d notes", got, notes)
	}
	b, _ := json.Marshal(got[0])
	for _, k := range []string{`"events_per_s"`, `"raw_events_per_s"`, `"ratio"`, `"p99_us"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON %s lacks %s", b, k)
		}
	}
	if !strings.HasPrefix(got[0].Text(), "writers=2 ") {
		t.Errorf("text %q", got[0].Text())
	}
}

// TestMain lets this test binary stand in for the programs a measurement
// starts: the fresh process of the restart measurement and the peers'
// program (a fake that prints two fixed peers).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "restart-child":
			fs := flag.NewFlagSet("restart-child", flag.ExitOnError)
			dir := fs.String("dir", "", "")
			probe := fs.String("probe", "", "")
			tick := fs.Duration("tick", 0, "")
			workers := fs.Int("workers", 0, "")
			fs.Parse(os.Args[2:])
			cfg := RestartChildConfig{Dir: *dir, Probe: uuid.MustParse(*probe), Tick: *tick, Workers: *workers}
			if err := RestartChild(context.Background(), cfg, os.Stdout); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(0)
		case "fake-peers":
			fmt.Println(`{"peer":"fake/a","version":"v1","label":"in memory, not durable","jobs":200,"setup_s":0.1,"runs_s":0.01,"runs_per_s":20000,"lag_p50_ms":1,"lag_p99_ms":2}`)
			fmt.Println(`{"peer":"fake/b","version":"v2","label":"in memory, not durable","jobs":200,"setup_s":0.1,"runs_s":0.02,"runs_per_s":10000,"lag_p50_ms":3,"lag_p99_ms":4}`)
			os.Exit(0)
		case "fake-peers-args":
			// River only when told a database, with the workers it was told.
			fs := flag.NewFlagSet("fake-peers-args", flag.ExitOnError)
			jobs := fs.Int("jobs", 0, "")
			url := fs.String("postgres", "", "")
			workers := fs.Int("workers", 0, "")
			fs.Duration("poll", 0, "")
			fs.Parse(os.Args[2:])
			fmt.Printf(`{"peer":"fake/a","version":"v1","label":"in memory, not durable","jobs":%d,"runs_s":1,"runs_per_s":1}`+"\n", *jobs)
			if *url != "" {
				fmt.Printf(`{"peer":"river","version":"v0","label":"durable","jobs":%d,"runs_s":1,"runs_per_s":2,"workers":%d}`+"\n", *jobs, *workers)
			}
			os.Exit(0)
		}
	}
	os.Exit(pgtest.Main(m))
}

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func selfChild(exe string) ChildCommand {
	return func(c RestartChildConfig) (string, []string) {
		return exe, []string{"restart-child", "--dir", c.Dir, "--probe", c.Probe.String(), "--tick", c.Tick.String(),
			"--workers", strconv.Itoa(c.Workers)}
	}
}

func TestNewConfigsNameTheFieldOutOfLimits(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{SchedulerConfig{Tasks: 1, Workers: 1, Tick: time.Microsecond}.Validate(), "Tick"},
		{LagConfig{Tasks: 0, Workers: 1, Load: 0.5}.Validate(), "Tasks"},
		{LagConfig{Tasks: 1, Workers: 0, Load: 0.5}.Validate(), "Workers"},
		{LagConfig{Tasks: 1, Workers: 1, Load: 0}.Validate(), "Load"},
		{LagConfig{Tasks: 1, Workers: 1, Load: 1.5}.Validate(), "Load"},
		{LagConfig{Tasks: 1, Workers: 1, Load: math.NaN()}.Validate(), "Load"},
		{LagConfig{Tasks: 1, Workers: 1, Load: 1, Tick: 2 * time.Hour}.Validate(), "Tick"},
		{RestartChildConfig{Probe: uuid.New(), Tick: time.Second, Workers: 1}.Validate(), "Dir"},
		{RestartChildConfig{Dir: "d", Tick: time.Second, Workers: 1}.Validate(), "Probe"},
		{RestartChildConfig{Dir: "d", Probe: uuid.New(), Workers: 1}.Validate(), "Tick"},
		{RestartChildConfig{Dir: "d", Probe: uuid.New(), Tick: time.Second}.Validate(), "Workers"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("err = %v, want one naming %s", c.err, c.want)
		}
	}
}

// jsonFields decodes v's JSON into a map, so a test sees the names and
// JSON types other programs see.
func jsonFields(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// wantNumbers checks that every key is present as a JSON number.
func wantNumbers(t *testing.T, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			t.Errorf("no %q in %v", k, m)
			continue
		}
		if _, ok := v.(float64); !ok {
			t.Errorf("%q is %T (%v), want a number", k, v, v)
		}
	}
}

// The fields of DESIGN.md §6, parsed by other programs.
var (
	schedulerContract = []string{"tasks", "runs_per_s", "events_per_s", "raw_events_per_s", "ratio", "lag_p50_ms",
		"lag_p99_ms", "rss_bytes_per_task", "restart_s"}
	lagContract = []string{"tasks", "lag_p99_ms", "raw_events_per_s"}
)

func TestResultsCarryTheContractFields(t *testing.T) {
	peer := PeerResult{Peer: "p", Version: "v", Label: PeerLabel, Jobs: 1, RunsPerS: 1}
	m := jsonFields(t, SchedulerResult{Tasks: 1, Peers: []PeerResult{peer}})
	wantNumbers(t, m, schedulerContract...)
	wantNumbers(t, m, "tick_ms", "create_s", "heap_bytes_per_task", "runs_s", "cpu_us_per_run", "allocs_per_run",
		"alloc_bytes_per_run", "create_allocs_per_task", "restart_start_s",
		"restart_rss_bytes_per_task", "load_avg_1m")
	if _, ok := m["rss_measured"].(bool); !ok {
		t.Errorf("rss_measured is %T", m["rss_measured"])
	}
	m = jsonFields(t, LagResult{Tasks: 1, Peers: []PeerResult{peer}})
	wantNumbers(t, m, lagContract...)
	wantNumbers(t, m, "load", "tick_ms", "peak_runs_per_s", "rate_per_s", "runs_per_s", "lag_p50_ms", "lag_max_ms",
		"tick_wait_p99_ms", "due_lag_p50_ms", "due_lag_p99_ms", "load_avg_1m", "ticks", "tick_p99_median_ms", "ticks_over_50ms")
	for _, v := range []any{SchedulerResult{Peers: []PeerResult{peer}}, LagResult{Peers: []PeerResult{peer}}} {
		// Keyed by name: DESIGN.md §8.1 reads peers.river.runs_per_s.
		ps, ok := jsonFields(t, v)["peers"].(map[string]any)
		if !ok || len(ps) != 1 {
			t.Fatalf("peers %v", jsonFields(t, v)["peers"])
		}
		p := ps["p"].(map[string]any)
		wantNumbers(t, p, "jobs", "runs_per_s", "lag_p50_ms", "lag_p99_ms", "setup_s", "runs_s")
		if p["label"] != PeerLabel || p["peer"] != "p" {
			t.Errorf("peer %v", p)
		}
	}
}

func TestParsePeers(t *testing.T) {
	good := `{"peer":"robfig/cron","version":"v3.0.1","label":"in memory, not durable","jobs":100000,"setup_s":0.2,"runs_s":0.3,"runs_per_s":333333,"lag_p50_ms":120,"lag_p99_ms":290,"later":"a field added later"}`
	got, err := ParsePeers(strings.NewReader("\n" + good + "\n\n" + strings.Replace(good, "robfig/cron", "gocron", 1) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Peer != "robfig/cron" || got[1].Peer != "gocron" || got[0].Jobs != 100000 ||
		got[0].RunsPerS != 333333 || got[0].LagP99ms != 290 || got[0].Label != PeerLabel {
		t.Fatalf("parsed %+v", got)
	}
	for _, bad := range []string{
		"",
		"not json",
		`{"peer":"","jobs":1,"runs_per_s":1}`,
		`{"peer":"x","jobs":0,"runs_per_s":1}`,
		`{"peer":"x","jobs":1,"runs_per_s":0}`,
		`{"peer":"x","jobs":"1","runs_per_s":1}`,
	} {
		if _, err := ParsePeers(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestPeersThatFailAreAnError(t *testing.T) {
	if _, _, err := (Peers{Path: filepath.Join(t.TempDir(), "missing")}).measure(context.Background(), 1, nil); err == nil {
		t.Error("a missing peers program measured")
	}
	got, note, err := Peers{Note: "why"}.measure(context.Background(), 1, nil)
	if err != nil || got == nil || len(got) != 0 || note != "why" {
		t.Errorf("not measured: %v %q %v", got, note, err)
	}
}

func TestReportTable(t *testing.T) {
	lines := `{"store":"embedded","writers":64,"events_per_s":91000,"raw_events_per_s":120000,"ratio":0.76,"p99_us":900}
{"tasks":100000,"runs_per_s":8000,"events_per_s":24000,"raw_events_per_s":92000,"ratio":0.26,"lag_p99_ms":9000,"rss_bytes_per_task":1900,"rss_measured":true,"restart_s":2.5,"tick_ms":100,"peers":[{"peer":"gocron","version":"v2.21.2","label":"in memory, not durable","jobs":100000,"runs_per_s":21900,"lag_p99_ms":9000}]}
`
	store, err := ReadJSONLines[StoreResult](strings.NewReader(strings.SplitN(lines, "\n", 2)[0]))
	if err != nil {
		t.Fatal(err)
	}
	sched, err := ReadJSONLines[SchedulerResult](strings.NewReader(strings.SplitN(lines, "\n", 2)[1]))
	if err != nil || len(sched) != 1 {
		t.Fatal(sched, err)
	}
	if _, err := ReadJSONLines[SchedulerResult](strings.NewReader("{]")); err == nil {
		t.Error("bad JSON read")
	}
	lag := LagResult{Tasks: 100000, Load: 0.5, LagP99ms: 42.5, TickMs: 100, PeakRunsPerS: 8000, RatePerS: 4000}
	table := Report{Store: store, Scheduler: &sched[0], Lag: &lag, Projections: &ProjectionsResult{Writers: 64}}.Table()
	for _, want := range []string{
		"store: appends, 64 writer(s)", "91,000 events/s", "ratio 0.76",
		"scheduler: 100,000 tasks all due", "8,000 runs/s", "bar ≥ 20,000",
		"1,900 B", "2.50 s", "bar ≤ 10 s",
		"p99 beyond the tick at 0.50 × peak", "42.5 ms", "bar ≤ 50 ms",
		"peer: gocron v2.21.2", "21,900 runs/s", "in memory, not durable",
		"peer: the raw store, 3 appends per run", "30,667 runs/s",
		"projections:",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if got := count(-1234567); got != "-1,234,567" {
		t.Errorf("count = %q", got)
	}
}

// TestSchedulerSmoke runs the smallest scheduler measurement end to end,
// the restart in a fresh process (this test binary) and fake peers
// included: it checks that every field is filled with a plausible value,
// never how fast anything was.
func TestSchedulerSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("writes to disk, takes seconds")
	}
	exe := self(t)
	res, err := Scheduler(context.Background(), SchedulerConfig{Tasks: 300, Workers: 8, Dir: t.TempDir(),
		Child: selfChild(exe), Peers: Peers{Path: fakePeers(t, exe)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	m := jsonFields(t, res)
	wantNumbers(t, m, schedulerContract...)
	switch {
	case res.Tasks != 300 || res.TickMs != 100:
		t.Errorf("tasks %d, tick %vms", res.Tasks, res.TickMs)
	case !(res.RunsPerS > 0) || math.Abs(res.EventsPerS-3*res.RunsPerS) > 1e-6*res.EventsPerS:
		t.Errorf("runs/s %v, events/s %v", res.RunsPerS, res.EventsPerS)
	case !(res.RawEventsPerS > 0) || math.Abs(res.Ratio-res.EventsPerS/res.RawEventsPerS) > 1e-9:
		t.Errorf("raw %v, ratio %v", res.RawEventsPerS, res.Ratio)
	case res.LagP50ms < 0 || res.LagP99ms < res.LagP50ms:
		t.Errorf("lag p50 %v p99 %v", res.LagP50ms, res.LagP99ms)
	case !(res.RestartStartS > 0) || !(res.RestartS > res.RestartStartS):
		t.Errorf("restart %vs, of which the child's start %vs", res.RestartS, res.RestartStartS)
	case len(res.Peers) != 2 || res.Peers[0].Peer != "fake/a" || res.PeersNote != "":
		t.Errorf("peers %+v (%s)", res.Peers, res.PeersNote)
	}
	if runtime.GOOS == "linux" {
		// Far less than 1 MB per task either way. Its sign is not checked:
		// what 300 tasks add is within the process's own noise (a GC may hand
		// back more than they take), so a small N can read below zero.
		if !res.RSSMeasured || !(math.Abs(res.RSSBytesPerTask) < 1<<20) ||
			!(math.Abs(res.RestartRSSBytesPerTask) < 1<<20) {
			t.Errorf("RSS measured %v: %v B/task, after restart %v B/task", res.RSSMeasured, res.RSSBytesPerTask, res.RestartRSSBytesPerTask)
		}
	}
	if !strings.Contains(res.Text(), "restart in a fresh process") || !strings.Contains(res.Text(), "peer fake/b v2") {
		t.Errorf("text %s", res.Text())
	}
}

// fakePeers is a script running this test binary as the fake peers.
func fakePeers(t *testing.T, exe string) string {
	return fakePeersAs(t, exe, "fake-peers")
}

func fakePeersAs(t *testing.T, exe, mode string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake peers are a shell script")
	}
	p := filepath.Join(t.TempDir(), "peers")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexec '"+exe+"' "+mode+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSchedulerOnPostgres runs the smallest scheduler measurement on a
// real Postgres: the wave completes there, the peers program is told the
// database and our workers (so River runs on it), and the run's schema is
// dropped afterwards.
func TestSchedulerOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Postgres, takes seconds")
	}
	url := pgtest.URL(t)
	res, err := Scheduler(context.Background(), SchedulerConfig{Tasks: 200, Workers: 8, Postgres: url,
		Peers: Peers{Path: fakePeersAs(t, self(t), "fake-peers-args")}})
	if err != nil {
		t.Fatal(err)
	}
	wantNumbers(t, jsonFields(t, res), schedulerContract...)
	river, ok := res.Peers.Find("river")
	switch {
	case res.Store != "postgres" || res.Tasks != 200:
		t.Errorf("store %q, tasks %d", res.Store, res.Tasks)
	case !(res.RunsPerS > 0) || !(res.RawEventsPerS > 0) || res.RestartS != 0:
		t.Errorf("runs/s %v, raw %v, restart %v", res.RunsPerS, res.RawEventsPerS, res.RestartS)
	case !ok || river.Workers != 8 || river.Jobs != 200:
		t.Errorf("peers %+v", res.Peers)
	}
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var left int
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'cronactor_bench_%'").Scan(&left); err != nil || left != 0 {
		t.Errorf("%d bench schemas left (%v)", left, err)
	}
}

// TestLagSmoke runs the smallest lag measurement: plausible values, the
// peers left out on purpose.
func TestLagSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("writes to disk, takes seconds")
	}
	tracePath := filepath.Join(t.TempDir(), "paced.trace")
	res, err := Lag(context.Background(), LagConfig{Tasks: 200, Workers: 8, Load: 0.5, Dir: t.TempDir(),
		Trace: tracePath, Peers: Peers{Note: "not asked"}})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(tracePath); err != nil || !bytes.HasPrefix(b, []byte("go 1.")) {
		t.Errorf("the paced phase's execution trace: %v, %d bytes, want a Go trace", err, len(b))
	}
	if len(res.SlowTicks) != min(res.TicksOver50ms, maxSlowTicks) {
		t.Errorf("%d slow ticks named, %d over 50ms", len(res.SlowTicks), res.TicksOver50ms)
	}
	t.Logf("%+v", res)
	wantNumbers(t, jsonFields(t, res), lagContract...)
	switch {
	case !(res.PeakRunsPerS > 0) || math.Abs(res.RatePerS-0.5*res.PeakRunsPerS) > 1e-9*res.PeakRunsPerS:
		t.Errorf("peak %v, rate %v", res.PeakRunsPerS, res.RatePerS)
	case !(res.RunsPerS > 0) || !(res.DurationS > 0) || !(res.RawEventsPerS > 0):
		t.Errorf("runs/s %v over %vs, raw %v", res.RunsPerS, res.DurationS, res.RawEventsPerS)
	case res.LagP50ms < 0 || res.LagP99ms < res.LagP50ms || res.LagMaxms < res.LagP99ms:
		t.Errorf("lag beyond the tick p50 %v p99 %v max %v", res.LagP50ms, res.LagP99ms, res.LagMaxms)
	case res.TickWaitP99ms < 0 || res.TickWaitP99ms > res.TickMs:
		t.Errorf("tick wait p99 %vms, tick %vms", res.TickWaitP99ms, res.TickMs)
	case res.DueLagP99ms < res.LagP99ms-res.TickMs:
		t.Errorf("due lag p99 %v, beyond the tick %v", res.DueLagP99ms, res.LagP99ms)
	case res.Ticks < 1 || res.TickP99MedianMs > res.LagMaxms || res.TicksOver50ms > res.Ticks:
		t.Errorf("%d ticks, median of their p99 %vms (max %vms), %d over 50ms", res.Ticks, res.TickP99MedianMs, res.LagMaxms, res.TicksOver50ms)
	case len(res.Peers) != 0 || res.PeersNote != "not asked":
		t.Errorf("peers %+v (%s)", res.Peers, res.PeersNote)
	}
	if ps, ok := jsonFields(t, res)["peers"].(map[string]any); !ok || len(ps) != 0 {
		t.Errorf("peers not measured must read {}, not %v", jsonFields(t, res)["peers"])
	}
}

// TestTickFigures: each tick's own p99, their median, and the ticks above
// 50 ms.
func TestTickFigures(t *testing.T) {
	ms := time.Millisecond
	at := func(i int) time.Time { return time.Unix(0, 0).Add(time.Duration(i) * 100 * ms) }
	burst := func(last time.Duration) []time.Duration { // 100 runs: 0.5 to 49.5 ms, then last
		l := make([]time.Duration, 0, 100)
		for i := 1; i < 100; i++ {
			l = append(l, time.Duration(i)*ms/2)
		}
		return append(l, last)
	}
	byTick := map[time.Time][]time.Duration{
		at(0): burst(10 * ms),  // p99 49 ms (the 99th of 100)
		at(1): burst(500 * ms), // p99 49.5: one slow run is not a tick's 1%
		at(2): {60 * ms, 70 * ms},
		at(3): {20 * ms},
		at(4): {80 * ms, 30 * ms, 90 * ms},
	}
	ticks, median, over := tickFigures(byTick)
	// p99s: 49, 49.5, 60, 20, 80 -> sorted 20, 49, 49.5, 60, 80.
	if ticks != 5 || median != 49.5 || over != 2 {
		t.Errorf("tickFigures = %d ticks, median %v ms, %d over 50 ms; want 5, 49.5, 2", ticks, median, over)
	}
	if ticks, median, over := tickFigures(nil); ticks != 0 || median != 0 || over != 0 {
		t.Errorf("no ticks: %d, %v, %d", ticks, median, over)
	}
}

// TestSlowTicks: the ticks over 50 ms in time order, from the first due
// time, and no more than the limit.
func TestSlowTicks(t *testing.T) {
	ms := time.Millisecond
	first := time.Unix(100, 0)
	byTick := map[time.Time][]time.Duration{
		first.Add(2250 * ms): {60 * ms, 71 * ms}, // p99 of two is the lower (percentile)
		first.Add(25 * ms):   {10 * ms, 20 * ms},
		first.Add(1000 * ms): {51 * ms},
		first.Add(3000 * ms): {50 * ms}, // not over 50 ms
		first.Add(4000 * ms): {90 * ms},
	}
	want := []SlowTick{{AtS: 1, P99ms: 51}, {AtS: 2.25, P99ms: 60}, {AtS: 4, P99ms: 90}}
	if got := slowTicks(byTick, first, 10); !slices.Equal(got, want) {
		t.Errorf("slowTicks = %v, want %v", got, want)
	}
	if got := slowTicks(byTick, first, 2); !slices.Equal(got, want[:2]) {
		t.Errorf("slowTicks limit 2 = %v, want %v", got, want[:2])
	}
	if got := slowTicks(map[time.Time][]time.Duration{first: {10 * ms}}, first, 10); got != nil {
		t.Errorf("no slow tick: %v", got)
	}
	res := LagResult{TicksOver50ms: 3, SlowTicks: want[:2]}
	if txt := res.Text(); !strings.Contains(txt, "3 over 50ms (at +1.000s 51ms +2.250s 60ms ...)") {
		t.Errorf("Text does not name the slow ticks: %s", txt)
	}
}

// TestLagTraceFailsEarly: a trace file that cannot be written fails the
// run before anything is measured.
func TestLagTraceFailsEarly(t *testing.T) {
	var notes []string
	_, err := Lag(context.Background(), LagConfig{Tasks: 300, Workers: 8, Load: 0.5, Dir: t.TempDir(),
		Peers: Peers{Note: "none"}, Trace: filepath.Join(t.TempDir(), "missing", "paced.trace"),
		Progress: func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }})
	if err == nil || !strings.Contains(err.Error(), "execution trace") {
		t.Fatalf("err %v, want the trace file's", err)
	}
	if len(notes) != 0 {
		t.Fatalf("measured before the trace file failed: %q", notes)
	}
}

// TestSchedulerTraceFailsEarly: a trace file that cannot be written fails
// the run before a single task is created, not after the wait for the
// wave.
func TestSchedulerTraceFailsEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the raw store for 3 s first")
	}
	var notes []string
	_, err := Scheduler(context.Background(), SchedulerConfig{Tasks: 300, Workers: 8, Dir: t.TempDir(),
		Peers: Peers{Note: "none"}, Profiles: Profiles{Trace: filepath.Join(t.TempDir(), "missing", "wave.trace")},
		Progress: func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }})
	if err == nil || !strings.Contains(err.Error(), "execution trace") {
		t.Fatalf("err %v, want the trace file's", err)
	}
	for _, n := range notes {
		if strings.Contains(n, "creating") {
			t.Fatalf("tasks were created before the trace file failed: %q", n)
		}
	}
}

// TestPeerResultsJSON: the peers are one object keyed by name, in the
// order measured, so that peers.river.runs_per_s reads River's rate; the
// array earlier versions wrote is read too.
func TestPeerResultsJSON(t *testing.T) {
	ps := PeerResults{{Peer: "robfig/cron", Jobs: 1, RunsPerS: 10}, {Peer: "river", Jobs: 1, RunsPerS: 2, Workers: 64}}
	b, err := json.Marshal(SchedulerResult{Peers: ps})
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Peers map[string]struct {
			RunsPerS float64 `json:"runs_per_s"`
			Workers  int     `json:"workers"`
		} `json:"peers"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if r := m.Peers["river"]; r.RunsPerS != 2 || r.Workers != 64 || len(m.Peers) != 2 {
		t.Fatalf("peers.river %+v in %s", r, b)
	}
	if i, j := strings.Index(string(b), `"robfig/cron"`), strings.Index(string(b), `"river"`); i < 0 || j < i {
		t.Errorf("order lost: %s", b)
	}
	var back SchedulerResult
	if err := json.Unmarshal(b, &back); err != nil || len(back.Peers) != 2 || back.Peers[1].Peer != "river" || back.Peers[0].RunsPerS != 10 {
		t.Fatalf("round trip %+v %v", back.Peers, err)
	}
	var old SchedulerResult
	if err := json.Unmarshal([]byte(`{"peers":[{"peer":"gocron","jobs":1,"runs_per_s":3}]}`), &old); err != nil || len(old.Peers) != 1 || old.Peers[0].Peer != "gocron" {
		t.Fatalf("array form %+v %v", old.Peers, err)
	}
	if r, ok := back.Peers.Find("river"); !ok || r.RunsPerS != 2 {
		t.Errorf("Find river: %+v %v", r, ok)
	}
	if b, _ := json.Marshal(SchedulerResult{Peers: PeerResults{}}); !strings.Contains(string(b), `"peers":{}`) {
		t.Errorf("no peers: %s", b)
	}
}

// TestReportTableRiver: the Postgres scheduler row and River's, with the
// ratio against the 1.5× bar; a run without River says so.
func TestReportTableRiver(t *testing.T) {
	line := `{"tasks":20000,"runs_per_s":3000,"raw_events_per_s":6000,"ratio":1.5,"lag_p99_ms":900,"store":"postgres","peers":{"gocron":{"peer":"gocron","jobs":20000,"runs_per_s":9},"river":{"peer":"river","version":"v0.51.2","jobs":20000,"runs_per_s":1500,"workers":64},"river-1000-workers":{"peer":"river-1000-workers","version":"v0.51.2","jobs":20000,"runs_per_s":4000,"workers":1000}}}`
	res, err := ReadJSONLines[SchedulerResult](strings.NewReader(line))
	if err != nil || len(res) != 1 {
		t.Fatal(err)
	}
	table := Report{SchedulerPostgres: &res[0]}.Table()
	for _, want := range []string{"scheduler on Postgres: 20,000 tasks all due", "3,000 runs/s",
		"peer: river v0.51.2, 64 workers, same Postgres", "cronactor / River 2.00×; bar ≥ 1.5×",
		"peer: river-1000-workers v0.51.2, 1000 workers", "cronactor / River 0.75×"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "gocron") {
		t.Errorf("the Postgres rows list only River:\n%s", table)
	}
	res[0].Peers, res[0].PeersNote = nil, "--peers none"
	if table := (Report{SchedulerPostgres: &res[0]}).Table(); !regexp.MustCompile(`River on the same Postgres +not measured +--peers none`).MatchString(table) {
		t.Errorf("no River:\n%s", table)
	}
}
