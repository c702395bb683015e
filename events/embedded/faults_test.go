package embedded_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// filledStore opens a store in a new directory and appends n events of
// about 300 bytes, one per append, to a few streams.
func filledStore(t *testing.T, n int) (*embedded.Store, string) {
	t.Helper()
	return filledStoreWith(t, n, embedded.Options{})
}

func filledStoreWith(t *testing.T, n int, opts embedded.Options) (*embedded.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := embedded.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for i := 0; i < n; i++ {
		p, err := events.Propose(events.TaskDeleted{Reason: fmt.Sprintf("%04d %s", i, strings.Repeat("r", 250))}, uuid.Nil, testTime)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(context.Background(), fmt.Sprintf("task-%d", i%7), events.AnyVersion, p); err != nil {
			t.Fatal(err)
		}
	}
	return s, dir
}

// killedCopy copies the files of an open store, as they are on disk, into a
// new directory: what a kill -9 right now would leave (every acknowledged
// append is synced; the copy has no clean-shutdown file and no lock).
func killedCopy(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if rel == "LOCK" || rel == filepath.Join("events", "LOCK") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// newestWAL is the highest-numbered write-ahead log under dir/events.
func newestWAL(t *testing.T, dir string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "events", "*.log"))
	if len(logs) == 0 {
		t.Fatal("no write-ahead log")
	}
	sort.Strings(logs)
	return logs[len(logs)-1]
}

// flip inverts n bytes of the file at offset off.
func flip(t *testing.T, path string, off, n int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := off; i < off+n && i < len(b); i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot reads every file under dir (but LOCK files), for comparing a
// directory before and after an open that must change nothing.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || info.Name() == "LOCK" {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = b
		return err
	})
	return out
}

func sameFiles(t *testing.T, before, after map[string][]byte) {
	t.Helper()
	for name, b := range before {
		a, ok := after[name]
		if !ok {
			t.Errorf("%s was deleted", name)
		} else if !bytes.Equal(a, b) {
			t.Errorf("%s was changed", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s was written", name)
		}
	}
}

func headOf(t *testing.T, s *embedded.Store) uint64 { t.Helper(); return s.Head().Commit }

// TestWALDamagedInTheMiddleIsRefused: 64 bytes flipped at 10% of the newest
// write-ahead log of a killed store. Pebble alone would replay up to the
// damage and drop the rest; the store must refuse, name the file and offset,
// point at a backup or an explicit repair, and change nothing.
func TestWALDamagedInTheMiddleIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events int
	}{
		{"many blocks", 2000}, // ~700 KiB of log: the damage is blocks before the end
		{"one block", 40},     // ~14 KiB: valid records follow in the damaged block itself
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, src := filledStore(t, tc.events)
			dir := killedCopy(t, src)
			wal := newestWAL(t, dir)
			info, _ := os.Stat(wal)
			flip(t, wal, int(info.Size()/10), 64)
			before := snapshot(t, dir)

			s, err := embedded.Open(dir, embedded.Options{})
			if err == nil {
				got := headOf(t, s)
				s.Close()
				t.Fatalf("a log damaged at 10%% opened with head %d of %d", got, tc.events)
			}
			var d *embedded.LogDamageError
			if !errors.Is(err, embedded.ErrLogDamaged) || !errors.Is(err, embedded.ErrCorrupt) || !errors.As(err, &d) {
				t.Fatalf("open: %v, want a LogDamageError", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, filepath.Base(wal)) || !regexp.MustCompile(`offset \d+`).MatchString(msg) {
				t.Errorf("the error does not name the file and offset: %v", err)
			}
			if !strings.Contains(msg, "backup") || !strings.Contains(msg, "accept-data-loss") {
				t.Errorf("the error does not say what to do: %v", err)
			}
			if strings.Contains(msg, "rebuild") {
				t.Errorf("the error suggests a rebuild: %v", err)
			}
			if d.Offset > info.Size()/10 || d.NextValid <= d.Offset || d.ValidAfter == 0 {
				t.Errorf("damage at %d, next valid at %d, %d after; flipped at %d", d.Offset, d.NextValid, d.ValidAfter, info.Size()/10)
			}
			sameFiles(t, before, snapshot(t, dir))
			if testing.Verbose() {
				t.Logf("reported: %v", err)
			}
		})
	}
}

// TestWALDamageAcceptedIsRecorded: with AcceptDataLoss the store opens with
// the events before the damage, and leaves a copy of the log and a report
// saying what was cut.
func TestWALDamageAcceptedIsRecorded(t *testing.T) {
	const n = 2000
	st, src := filledStore(t, n)
	// A snapshot of the events that are about to be cut must not outlive
	// them.
	if err := st.WriteSnapshot(context.Background(), []events.SnapshotEntry{{Key: []byte("meta"), Value: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FlushSnapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	dir := killedCopy(t, src)
	wal := newestWAL(t, dir)
	info, _ := os.Stat(wal)
	flip(t, wal, int(info.Size()/10), 64)
	damaged, _ := os.ReadFile(wal)

	s, err := embedded.Open(dir, embedded.Options{AcceptDataLoss: true})
	if err != nil {
		t.Fatal(err)
	}
	head := headOf(t, s)
	if head == 0 || head >= n {
		t.Fatalf("head after the cut = %d, want between 0 and %d", head, n)
	}
	if all, err := s.ReadAll(context.Background(), events.Start, 0); err != nil || uint64(len(all)) != head {
		t.Fatalf("read %d events (%v), head %d", len(all), err, head)
	}
	if got := readSnapshot(t, s); len(got) != 0 {
		t.Fatalf("the snapshot table outlived the cut: %v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	reports, _ := filepath.Glob(filepath.Join(dir, "DATA_LOSS-*.json"))
	if len(reports) != 1 {
		t.Fatalf("%d data-loss reports", len(reports))
	}
	var r struct {
		Log             string `json:"log"`
		Copy            string `json:"copy"`
		CutAt           int64  `json:"cut_at"`
		ValidRecordsCut int    `json:"valid_records_cut"`
		LostFrom        uint64 `json:"lost_from"`
		LostTo          uint64 `json:"lost_to"`
		HeadAfter       uint64 `json:"head_after"`
	}
	b, _ := os.ReadFile(reports[0])
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Log != wal || r.CutAt <= 0 || r.CutAt > info.Size()/10 || r.ValidRecordsCut == 0 || r.HeadAfter != head {
		t.Errorf("report: %s", b)
	}
	if r.LostFrom <= head || r.LostTo != n {
		t.Errorf("report says positions %d-%d were lost; the log ends at %d of %d", r.LostFrom, r.LostTo, head, n)
	}
	if cp, err := os.ReadFile(r.Copy); err != nil || !bytes.Equal(cp, damaged) {
		t.Errorf("the copy of the damaged log differs or is missing: %v", err)
	}
	// The next start is normal.
	s, err = embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if headOf(t, s) != head {
		t.Fatalf("head %d after reopen, want %d", headOf(t, s), head)
	}
}

// TestTornTailIsTolerated: the last record cut short, as a crash mid-write
// leaves it, opens with every record before it.
func TestTornTailIsTolerated(t *testing.T) {
	const n = 300
	_, src := filledStore(t, n)
	dir := killedCopy(t, src)
	wal := newestWAL(t, dir)
	info, _ := os.Stat(wal)
	if err := os.Truncate(wal, info.Size()-100); err != nil {
		t.Fatal(err)
	}
	s, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatalf("a torn tail was refused: %v", err)
	}
	defer s.Close()
	if got := headOf(t, s); got != n-1 {
		t.Fatalf("head %d after a torn tail, want %d", got, n-1)
	}
}

// TestMissingCurrentIsRefused: events/CURRENT gone from a killed store. The
// open must fail with a clear error, not panic, and no start may delete or
// change the files that are left.
func TestMissingCurrentIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		memTable uint64 // 1 MiB: ~1 MiB of events fills it, and Pebble writes tables
	}{{"log only", 0}, {"tables", 1 << 20}} {
		t.Run(tc.name, func(t *testing.T) {
			_, src := filledStoreWith(t, 3000, embedded.Options{MemTableSize: tc.memTable})
			dir := killedCopy(t, src)
			if tables, _ := filepath.Glob(filepath.Join(dir, "events", "*.sst")); tc.memTable != 0 && len(tables) == 0 {
				t.Fatal("no table was written")
			}
			if err := os.Remove(filepath.Join(dir, "events", "CURRENT")); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			for i := 0; i < 2; i++ { // the second start must not undo the first's refusal
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("open panicked: %v", r)
						}
					}()
					s, err := embedded.Open(dir, embedded.Options{})
					if err == nil {
						h := headOf(t, s)
						s.Close()
						t.Fatalf("start %d: opened without events/CURRENT (head %d)", i+1, h)
					}
					if !errors.Is(err, embedded.ErrMissingFiles) || !strings.Contains(err.Error(), "CURRENT") || !strings.Contains(err.Error(), "backup") {
						t.Fatalf("start %d: %v", i+1, err)
					}
				}()
				sameFiles(t, before, snapshot(t, dir))
			}
		})
	}
}

// TestMissingEventsDirIsRefused: the whole events/ directory gone from a
// store that was created: refused, never a silent fresh start.
func TestMissingEventsDirIsRefused(t *testing.T) {
	_, src := filledStore(t, 10)
	dir := killedCopy(t, src)
	if err := os.RemoveAll(filepath.Join(dir, "events")); err != nil {
		t.Fatal(err)
	}
	s, err := embedded.Open(dir, embedded.Options{})
	if err == nil {
		s.Close()
		t.Fatal("opened a store whose events/ is gone")
	}
	if !errors.Is(err, embedded.ErrMissingFiles) {
		t.Fatalf("open: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "events")); !os.IsNotExist(err) {
		t.Fatal("the refused open created events/")
	}
}

// TestForeignDirectoryIsLeftAsFound: a refused foreign directory holds
// exactly what it held before, no LOCK file either.
func TestForeignDirectoryIsLeftAsFound(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(dir)
	if _, err := embedded.Open(dir, embedded.Options{}); !errors.Is(err, embedded.ErrForeignDir) {
		t.Fatalf("open of a foreign dir: %v", err)
	}
	after, _ := os.ReadDir(dir)
	if len(after) != len(before) {
		var names []string
		for _, e := range after {
			names = append(names, e.Name())
		}
		t.Fatalf("the refused directory now holds %v", names)
	}
}
