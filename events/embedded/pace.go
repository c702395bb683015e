package embedded

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// Compactions are paced. A compaction of the log runs on one goroutine as
// fast as it can: 50–130 ms of a core every eight flushes in a paced stream
// of runs (docs/performance.md, "Compactions and sweeps take their time").
// On a 2-core machine that is CPU the ticks' bursts and the collector need
// at the same moment, and the ticks it overlapped went over the lag bar; so
// did those a snapshot sweep overlapped, whose table compacts too. So a
// compaction's table writes pause, every pacePeriod of its work, for
// compactionPace times that work: a compaction takes at most a third of a
// core and three times as long. Flushes are not paced (the next memtable
// waits for them), and neither is a compaction while L0 is deep
// (pacedSublevels of the log, pacedSnapshotSublevels of the snapshot
// table): there the writes would soon wait for it.
type pacer struct {
	// compacting holds the paths of tables a compaction is writing, from
	// Pebble's TableCreated until the table's first write.
	compacting sync.Map
	// deep reports whether L0 has deepAt sublevels or more; nil until the
	// database is open (nothing is paced before).
	deep   atomic.Pointer[func() bool]
	deepAt int32
	ratio  float64
	// now and sleep are the wall clock (pacing is about real CPU time);
	// sleep pauses the writer of table.
	now   func() time.Time
	sleep func(table string, d time.Duration)
}

// newPacer paces compactions while L0 has fewer than deepAt sublevels.
func newPacer(deepAt int32) *pacer {
	return &pacer{deepAt: deepAt, ratio: compactionPace, now: time.Now,
		sleep: func(_ string, d time.Duration) { time.Sleep(d) }}
}

// opened starts pacing db's compactions. L0's depth is read at most every
// deepEvery: Pebble's Metrics holds the lock its commits take.
func (p *pacer) opened(db *pebble.DB) {
	var (
		mu      sync.Mutex
		checked time.Time
		isDeep  bool
	)
	deep := func() bool {
		mu.Lock()
		defer mu.Unlock()
		if now := p.now(); checked.IsZero() || now.Sub(checked) >= deepEvery {
			checked, isDeep = now, db.Metrics().Levels[0].Sublevels >= p.deepAt
		}
		return isDeep
	}
	p.deep.Store(&deep)
}

// listener tells the pacer which tables compactions write. Pebble calls
// TableCreated after creating the file and before writing to it.
func (p *pacer) listener() *pebble.EventListener {
	return &pebble.EventListener{TableCreated: func(info pebble.TableCreateInfo) {
		if info.Reason == "compacting" {
			p.compacting.Store(info.Path, struct{}{})
		}
	}}
}

// fs is fs with the tables compactions write paced.
func (p *pacer) fs(fs vfs.FS) vfs.FS { return pacedFS{FS: fs, p: p} }

// pause reports whether a compaction should pause now: once the database
// is open, and while L0 is not deep.
func (p *pacer) pause() bool {
	deep := p.deep.Load()
	return deep != nil && !(*deep)()
}

type pacedFS struct {
	vfs.FS
	p *pacer
}

func (fs pacedFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil || !strings.HasSuffix(name, ".sst") {
		return f, err
	}
	return &pacedFile{File: f, p: fs.p, name: name}, nil
}

// pacedFile is a table being written; one goroutine writes it.
type pacedFile struct {
	vfs.File
	p       *pacer
	name    string
	checked bool // whether a compaction writes it is known
	paced   bool
	last    time.Time     // the end of the last write or pause
	worked  time.Duration // since the last pause
}

func (f *pacedFile) Write(b []byte) (int, error) {
	n, err := f.File.Write(b)
	if !f.checked {
		f.checked = true
		_, f.paced = f.p.compacting.LoadAndDelete(f.name)
	}
	if !f.paced {
		return n, err
	}
	now := f.p.now()
	if !f.last.IsZero() {
		f.worked += now.Sub(f.last)
	}
	f.last = now
	if f.worked >= pacePeriod {
		if f.p.pause() {
			f.p.sleep(f.name, time.Duration(float64(f.worked)*f.p.ratio))
			f.last = f.p.now()
		}
		f.worked = 0
	}
	return n, err
}

func (f *pacedFile) Close() error {
	if !f.checked {
		f.p.compacting.Delete(f.name)
	}
	return f.File.Close()
}
