package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

// faultStore is the embedded store (snapshots and all) with one stream's
// reads made to fail, or to hang, on demand; it counts the events its
// reads of that stream return.
type faultStore struct {
	*embedded.Store
	mu     sync.Mutex
	stream string
	fails  int           // the next reads of stream that fail
	hang   chan struct{} // set: reads of stream wait for it to close
	begun  chan struct{} // signalled when a hung read begins
	read   int           // events of stream returned
}

var errInjected = errors.New("injected read failure")

func newFaultStore(t *testing.T) *faultStore {
	t.Helper()
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &faultStore{Store: st, begun: make(chan struct{}, 16)}
}

func (f *faultStore) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	f.mu.Lock()
	mine := stream == f.stream
	hang := f.hang
	fail := mine && f.fails > 0
	if fail {
		f.fails--
	}
	f.mu.Unlock()
	if fail {
		return nil, errInjected
	}
	if mine && hang != nil {
		f.begun <- struct{}{}
		select {
		case <-hang:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	recs, err := f.Store.ReadStream(ctx, stream, from, limit)
	if mine {
		f.mu.Lock()
		f.read += len(recs)
		f.mu.Unlock()
	}
	return recs, err
}

func (f *faultStore) watch(id uuid.UUID) {
	f.mu.Lock()
	f.stream, f.read = events.TaskStream(id), 0
	f.mu.Unlock()
}

func (f *faultStore) eventsRead() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.read
}

// otherWriter appends to task id's stream what another process updating
// its payload would record: the scheduler's state of the task is then
// behind its stream, and its next append meets a version conflict.
func otherWriter(t *testing.T, store events.Store, id uuid.UUID, at time.Time) {
	t.Helper()
	ctx := context.Background()
	stream := events.TaskStream(id)
	recs, err := store.ReadStream(ctx, stream, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := rules.Replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := rules.Decide(st, rules.Update{Payload: json.RawMessage(`{"by":"another writer"}`)}, at)
	if err != nil || len(evs) == 0 {
		t.Fatalf("the other writer's update: %v, %d events", err, len(evs))
	}
	props := make([]events.Proposed, len(evs))
	for i, e := range evs {
		if props[i], err = events.Propose(e, uuid.Nil, at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Append(ctx, stream, events.Exactly(st.Version), props...); err != nil {
		t.Fatal(err)
	}
}

// runs is a handler that reports the task of each run it executes.
type runs chan uuid.UUID

func (r runs) Handle(_ context.Context, run *worker.Run) (json.RawMessage, error) {
	r <- run.TaskID
	return nil, nil
}

// await waits (wall clock, as a bound on a failure only) for a run of id.
func (r runs) await(t *testing.T, id uuid.UUID, what string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-r:
			if got == id {
				return
			}
		case <-timeout:
			t.Fatalf("%s: no run of task %s", what, id)
		}
	}
}

var loadT0 = time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)

func startLoadScheduler(t *testing.T, cfg Config, h worker.Handler) *Scheduler {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register("k", h); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopNowInternal(s) })
	return s
}

// syncBuffer is a log sink for several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A tick whose load fails keeps the task scheduled (issue 32, item 3).
// Another writer makes the task's next append conflict; the read after the
// conflict fails, and so do the loads when the tick comes again, twice: the
// task still runs afterwards, and each failure is logged at WARN with the
// task's ID. (It used to be unscheduled until a restart: the shard forgot
// it when it sent the tick, and the tick whose load failed told it
// nothing.)
func TestTickWhoseLoadFailsKeepsTheTaskScheduled(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewVirtual(loadT0)
	fs := newFaultStore(t)
	logs := &syncBuffer{}
	ran := make(runs, 64)
	s := startLoadScheduler(t, Config{Store: fs, Clock: clk, Tick: time.Second, Workers: 1,
		Logger: slog.New(slog.NewTextHandler(logs, nil))}, ran)
	tk, _, err := s.CreateTask(ctx, TaskSpec{Name: "a", Owner: "o", Kind: "k", Interval: time.Minute, FirstRun: loadT0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(loadT0.Add(time.Minute + time.Second))
	clk.Quiesce()
	ran.await(t, tk.ID, "first run")

	otherWriter(t, fs, tk.ID, clk.Now())
	fs.watch(tk.ID)
	fs.mu.Lock()
	fs.fails = 3 // the read after the conflict, and the next loads
	fs.mu.Unlock()
	clk.RunUntil(loadT0.Add(10 * time.Minute))
	clk.Quiesce()
	if fs.mu.Lock(); fs.fails != 0 {
		t.Fatalf("%d injected failures left: nothing loaded the task again, it is no longer scheduled", fs.fails)
	}
	fs.mu.Unlock()
	ran.await(t, tk.ID, "after the failed loads")
	got, err := s.Task(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Runs < 8 {
		t.Errorf("%d runs by 00:10 of a task due every minute from 00:01: it missed more than the retries took", got.Runs)
	}
	var warned int
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "task_id="+tk.ID.String()) && strings.Contains(line, errInjected.Error()) {
			warned++
		}
	}
	if warned < 3 {
		t.Errorf("%d WARN lines with the task's ID and the error, want one per failed load (3):\n%s", warned, logs)
	}
}

// A store read of one task that hangs delays no tick of another task of
// the same shard (issue 32, item 3): the shard hands out ticks without
// waiting for a task's actor to leave. Task a's actor is leaving with a
// command behind it whose read (after a version conflict) hangs; the
// shard's delivery of a's tick, then b's, returns at once and b runs; a's
// tick reaches a once its actor has left, and a runs too.
func TestHungReadDelaysNoOtherTaskOfTheShard(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewVirtual(loadT0)
	fs := newFaultStore(t)
	ran := make(runs, 64)
	// Ticks every hour: the test delivers the minute's ticks itself, as
	// the one shard would, while the clock cannot move (a read hangs).
	s := startLoadScheduler(t, Config{Store: fs, Clock: clk, Tick: time.Hour, Shards: 1, Workers: 2,
		StoreTimeout: time.Hour}, ran)
	spec := TaskSpec{Owner: "o", Kind: "k", Interval: time.Minute, FirstRun: loadT0.Add(time.Minute)}
	spec.Name = "a"
	a, _, err := s.CreateTask(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.Name = "b"
	b, _, err := s.CreateTask(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(loadT0.Add(2 * time.Minute)) // both due; no tick yet
	clk.Quiesce()

	otherWriter(t, fs, a.ID, clk.Now())
	fs.watch(a.ID)
	release := make(chan struct{})
	fs.mu.Lock()
	fs.hang = release
	fs.mu.Unlock()
	defer close(release)
	// a's actor answers a Get, then leaves with the update behind it in
	// its mailbox (sent while the entry is held, so before it can leave);
	// the update conflicts and its read hangs.
	e, err := s.lockActor(ctx, a.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	get := counted.RequestFuture(clk, s.sys.Root, e.pid, task.Get{}, time.Hour)
	upd := counted.RequestFuture(clk, s.sys.Root, e.pid, task.Command{Cmd: rules.Update{Payload: json.RawMessage(`{"by":"us"}`)}}, time.Hour)
	e.mu.Unlock()
	if _, err := get.Result(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fs.begun:
	case <-time.After(10 * time.Second):
		t.Fatal("a's read after the conflict did not begin")
	}
	e.mu.Lock()
	leaving := e.leaving
	e.mu.Unlock()
	if !leaving {
		t.Fatal("a's actor is not leaving: the test shows nothing")
	}

	tick := dueindex.Tick{At: clk.Now()}
	delivered := make(chan struct{})
	go func() {
		for _, id := range []uuid.UUID{a.ID, b.ID} {
			if s.room("default") {
				s.deliver(id, "default", tick)
			}
		}
		close(delivered)
	}()
	select {
	case <-delivered:
	case <-time.After(10 * time.Second):
		t.Fatal("the shard's delivery waits for a's actor, which waits for the store: b's tick is held up")
	}
	ran.await(t, b.ID, "b's tick while a's read hangs")

	release <- struct{}{} // the hung read goes on (the deferred close ends later ones)
	if _, err := upd.Result(); err != nil {
		t.Fatal(err)
	}
	ran.await(t, a.ID, "a's tick once its actor left")
}

// countingClock counts the work begun on it: every actor spawned and
// message sent by the scheduler.
type countingClock struct {
	clock.Clock
	begun atomic.Int64
}

func (c *countingClock) Begin() {
	c.begun.Add(1)
	c.Clock.Begin()
}

// A call about an unknown ID costs no actor (issue 32, item 2): 10,000
// reads and writes of random IDs spawn nothing and send nothing, and
// answer ErrTaskNotFound; a task created afterwards is found.
func TestUnknownIDsSpawnNoActor(t *testing.T) {
	ctx := context.Background()
	vclk := clock.NewVirtual(loadT0)
	clk := &countingClock{Clock: vclk}
	s := startLoadScheduler(t, Config{Store: newFaultStore(t), Clock: clk}, make(runs, 8))
	vclk.Quiesce() // the start's own work (the workers' spawns) is done
	before := clk.begun.Load()
	for i := range 10_000 {
		id := uuid.New()
		var err error
		switch i % 4 {
		case 0:
			_, err = s.Task(ctx, id)
		case 1:
			_, err = s.PauseTask(ctx, id)
		case 2:
			_, err = s.Trigger(ctx, id)
		default:
			_, err = s.Upcoming(ctx, id, 1)
		}
		if !errors.Is(err, ErrTaskNotFound) {
			t.Fatalf("call %d about an unknown ID: %v, want ErrTaskNotFound", i, err)
		}
	}
	if n := clk.begun.Load() - before; n != 0 {
		t.Errorf("10,000 calls about unknown IDs began %d actors or messages, want none", n)
	}
	if st := s.Stats(); st.Actors != 0 || st.Tasks != 0 {
		t.Errorf("after the flood: %d actors, %d tasks in memory", st.Actors, st.Tasks)
	}
	tk, created, err := s.CreateTask(ctx, TaskSpec{Name: "late", Owner: "o", Kind: "k", Interval: time.Minute})
	if err != nil || !created {
		t.Fatalf("create after the flood: %v, created %v", err, created)
	}
	if got, err := s.Task(ctx, tk.ID); err != nil || got.Name != "late" {
		t.Fatalf("the new task: %+v, %v", got, err)
	}
}

// A load reads the task's snapshot record and the events after it, not
// its whole stream (issue 32, item 1). A task whose actor stays (pinned)
// records 2,000 events; a restart after a crash reads at most about
// RecordEvery of them for it, and a call about it once deleted reads none
// of them; each time its state is the fold of the whole stream.
func TestLoadsReadTheSnapshotAndTheTail(t *testing.T) {
	ctx := context.Background()
	const every = 100
	fs := newFaultStore(t)
	cfg := Config{Store: fs, Tick: time.Hour, RecordEvery: every}
	start := func() *Scheduler {
		c := cfg
		c.Clock = clock.NewVirtual(loadT0)
		s, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Register("k", make(runs, 8)); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := start()
	tk, _, err := s.CreateTask(ctx, TaskSpec{Name: "long", Owner: "o", Kind: "k", Interval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TaskPID(ctx, tk.ID); err != nil { // pinned: its actor never rests
		t.Fatal(err)
	}
	for i := range 2000 {
		if _, err := s.UpdateTask(ctx, tk.ID, TaskUpdate{Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.sweep(ctx, nil); err != nil { // the task has an actor at the cut
		t.Fatal(err)
	}
	for i := range 7 { // recorded after the cut
		if _, err := s.UpdateTask(ctx, tk.ID, TaskUpdate{Payload: json.RawMessage(fmt.Sprintf(`{"after":%d}`, i))}); err != nil {
			t.Fatal(err)
		}
	}
	s.snap = nil // a crash: no snapshot at stop
	stopNowInternal(s)

	full := func() rules.State {
		recs, err := fs.Store.ReadStream(ctx, events.TaskStream(tk.ID), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		st, err := rules.Replay(recs)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) < 2000 {
			t.Fatalf("the stream has %d events", len(recs))
		}
		return st
	}
	sameState := func(what string, got rules.State) {
		t.Helper()
		want := full()
		// Compared as records: the binary form keeps every field (times as
		// instants, whatever their location).
		if g, w := recordOf(&got, events.Position{}), recordOf(&want, events.Position{}); g != w {
			t.Fatalf("%s: the state is not the fold of the whole stream:\n got %+v\nwant %+v", what, got, want)
		}
	}

	fs.watch(tk.ID)
	s = start()
	defer stopNowInternal(s)
	if n := fs.eventsRead(); n > every+10 {
		t.Errorf("the restart read %d events of the task, want at most about RecordEvery (%d)", n, every)
	}
	got, err := s.Task(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	sl := s.tasks[tk.ID]
	s.mu.Unlock()
	var st rules.State
	var pos events.Position
	switch {
	case sl.rec != "":
		if err := readRecordInto(sl.rec, &st, &pos); err != nil {
			t.Fatal(err)
		}
		sameState("after the restart", st)
	case sl.e != nil:
		if got.Version != full().Version {
			t.Fatalf("after the restart: version %d, the stream's %d", got.Version, full().Version)
		}
	}

	if _, err := s.DeleteTask(ctx, tk.ID); err != nil {
		t.Fatal(err)
	}
	s.cfg.Clock.(*clock.Virtual).Quiesce()
	fs.watch(tk.ID)
	if st := s.Stats(); st.Tasks != 0 {
		t.Fatalf("the deleted task is still in memory (%d tasks)", st.Tasks)
	}
	gone, err := s.Task(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := fs.eventsRead(); n > 10 {
		t.Errorf("a call about the deleted task read %d of its events", n)
	}
	if gone.Status != rules.StatusDeleted.String() {
		t.Fatalf("the deleted task reads as %s", gone.Status)
	}
	stl, _, err := s.loadTask(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameState("loaded once deleted", stl)
	if !reflect.DeepEqual(gone.Version, full().Version) {
		t.Fatalf("version %d, the stream's %d", gone.Version, full().Version)
	}
}

// The load path's settings are checked, each error naming its field, and
// their defaults are what the fields' documentation says.
func TestLoadConfig(t *testing.T) {
	st := newFaultStore(t)
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{Store: st, Loaders: -1}, "Loaders"},
		{Config{Store: st, Loaders: 10_001}, "Loaders"},
		{Config{Store: st, LoadRetry: -time.Second}, "LoadRetry"},
		{Config{Store: st, LoadRetryMax: -time.Second}, "LoadRetryMax"},
		{Config{Store: st, LoadRetry: time.Minute, LoadRetryMax: time.Second}, "LoadRetryMax"},
	} {
		var ce *ConfigError
		if err := tc.cfg.Validate(); !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("%+v: %v, want a ConfigError for %s", tc.cfg, err, tc.field)
		}
	}
	if err := (Config{Store: st, Loaders: 1, LoadRetry: time.Minute, RecordEvery: -1}).Validate(); err != nil {
		t.Errorf("a valid config: %v", err)
	}
	d := Config{Store: st, LoadRetry: 2 * time.Minute}.withDefaults()
	if d.Loaders != DefaultLoaders || d.RecordEvery != DefaultRecordEvery || d.LoadRetryMax != 2*time.Minute {
		t.Errorf("defaults: Loaders %d, RecordEvery %d, LoadRetryMax %s", d.Loaders, d.RecordEvery, d.LoadRetryMax)
	}
	if d := (Config{Store: st}).withDefaults(); d.LoadRetry != time.Second || d.LoadRetryMax != time.Minute {
		t.Errorf("defaults: LoadRetry %s, LoadRetryMax %s", d.LoadRetry, d.LoadRetryMax)
	}
}
