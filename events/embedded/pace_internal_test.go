package embedded

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// fakePacer is a pacer on a virtual clock: each write takes step, and the
// pauses are recorded, not slept.
func fakePacer(step time.Duration, deep bool) (*pacer, *[]time.Duration) {
	p := newPacer(pacedSublevels)
	clock := time.Unix(0, 0)
	p.now = func() time.Time { clock = clock.Add(step); return clock }
	var slept []time.Duration
	p.sleep = func(_ string, d time.Duration) { slept = append(slept, d); clock = clock.Add(d) }
	isDeep := func() bool { return deep }
	p.deep.Store(&isDeep)
	return p, &slept
}

func writeTable(t *testing.T, fs vfs.FS, name string, writes int) {
	t.Helper()
	if err := fs.MkdirAll(fs.PathDir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	for range writes {
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPacerPausesCompactionsOnly: a table a compaction writes pauses twice
// its work every pacePeriod of it; a flush's table, a table before the
// database is open or while L0 is deep, and a file that is not a table do
// not pause.
func TestPacerPausesCompactionsOnly(t *testing.T) {
	const name = "/db/000012.sst"
	compacting := pebble.TableCreateInfo{Reason: "compacting", Path: name}

	p, slept := fakePacer(500*time.Microsecond, false)
	p.listener().TableCreated(compacting)
	writeTable(t, p.fs(vfs.NewMem()), name, 21)
	// The first write starts the clock; then every 4 writes (4 × 0.5 ms)
	// make pacePeriod of work, paused for twice that.
	want := slices.Repeat([]time.Duration{4 * time.Millisecond}, 5)
	if !slices.Equal(*slept, want) {
		t.Errorf("a compaction's table paused %v, want %v", *slept, want)
	}
	if _, left := p.compacting.Load(name); left {
		t.Error("the table is still marked as a compaction's after its writes")
	}

	p, slept = fakePacer(500*time.Microsecond, false)
	p.listener().TableCreated(pebble.TableCreateInfo{Reason: "flushing", Path: name})
	writeTable(t, p.fs(vfs.NewMem()), name, 21)
	if len(*slept) != 0 {
		t.Errorf("a flush's table paused %v", *slept)
	}

	p, slept = fakePacer(500*time.Microsecond, true)
	p.listener().TableCreated(compacting)
	writeTable(t, p.fs(vfs.NewMem()), name, 21)
	if len(*slept) != 0 {
		t.Errorf("a compaction's table paused %v while L0 was deep", *slept)
	}

	p, slept = fakePacer(500*time.Microsecond, false)
	p.deep.Store(nil) // not open yet
	p.listener().TableCreated(compacting)
	writeTable(t, p.fs(vfs.NewMem()), name, 21)
	if len(*slept) != 0 {
		t.Errorf("a compaction's table paused %v before the database was open", *slept)
	}

	p, _ = fakePacer(500*time.Microsecond, false)
	fs := p.fs(vfs.NewMem())
	if err := fs.MkdirAll("/db", 0o755); err != nil {
		t.Fatal(err)
	}
	if f, err := fs.Create("/db/000013.log"); err != nil {
		t.Fatal(err)
	} else if _, wrapped := f.(*pacedFile); wrapped {
		t.Error("a log file is paced")
	}
	p.listener().TableCreated(pebble.TableCreateInfo{Reason: "compacting", Path: "/db/000014.sst"})
	writeTable(t, fs, "/db/000014.sst", 0)
	if _, left := p.compacting.Load("/db/000014.sst"); left {
		t.Error("a compaction's table closed unwritten is still marked")
	}
}

// TestPacerPausesPebblesCompactions runs Pebble with the pacer as the store
// does, writes until it has compacted, and checks that the pauses came from
// the tables its compactions wrote, and that every key reads back.
func TestPacerPausesPebblesCompactions(t *testing.T) {
	p := newPacer(pacedSublevels)
	var (
		mu       sync.Mutex
		pausesIn = map[string]int{}
		byReason = map[string]string{}
	)
	p.sleep = func(table string, _ time.Duration) {
		mu.Lock()
		pausesIn[table]++
		mu.Unlock()
	}
	// Each write takes pacePeriod on this clock: every write after a
	// table's first pauses.
	var clockMu sync.Mutex
	clock := time.Unix(0, 0)
	p.now = func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		clock = clock.Add(pacePeriod)
		return clock
	}
	recorder := pebble.EventListener{TableCreated: func(info pebble.TableCreateInfo) {
		mu.Lock()
		byReason[info.Path] = info.Reason
		mu.Unlock()
	}}
	listener := pebble.TeeEventListener(*p.listener(), recorder)
	db, err := pebble.Open("/db", &pebble.Options{
		FS:                    p.fs(vfs.NewMem()),
		MemTableSize:          1 << 20,
		L0CompactionThreshold: 2,
		Logger:                quietLogger{},
		EventListener:         &listener,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p.opened(db)

	const keys = 60000
	val := make([]byte, 100)
	for i := range keys {
		if err := db.Set(fmt.Appendf(nil, "k%08d", (i*7919)%keys), val, pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact([]byte("k"), []byte("l"), false); err != nil {
		t.Fatal(err)
	}
	if db.Metrics().Compact.Count == 0 {
		t.Fatal("Pebble did not compact")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(pausesIn) == 0 {
		t.Fatalf("no pause in %d compactions", db.Metrics().Compact.Count)
	}
	for name, n := range pausesIn {
		if byReason[name] != "compacting" {
			t.Errorf("%d pauses in %s, a table written %q", n, name, byReason[name])
		}
	}
	for i := range keys {
		if _, closer, err := db.Get(fmt.Appendf(nil, "k%08d", i)); err != nil {
			t.Fatalf("key %d: %v", i, err)
		} else {
			closer.Close()
		}
	}
}
