package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/events/storetest"
	"github.com/google/uuid"
)

func TestContractOnDisk(t *testing.T) {
	storetest.Run(t, func(t *testing.T) events.Store {
		s, err := embedded.Open(t.TempDir(), embedded.Options{MemTableSize: 4 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestContractInMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) events.Store {
		s, err := embedded.OpenMemory()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func appendOne(t *testing.T, s events.Store, stream string) events.AppendResult {
	t.Helper()
	p, err := events.Propose(events.TaskPaused{}, [16]byte{}, testTime)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Append(context.Background(), stream, events.AnyVersion, p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestReopenKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	s, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	appendOne(t, s, "task-a")
	last := appendOne(t, s, "task-b")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Head() != last.Position {
		t.Fatalf("head after reopen = %v, want %v", s.Head(), last.Position)
	}
	res := appendOne(t, s, "task-a")
	if res.Version != 1 || res.Position.Commit != 3 {
		t.Fatalf("append after reopen landed at version %d position %v", res.Version, res.Position)
	}
}

func TestSecondOpenIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = embedded.Open(dir, embedded.Options{})
	if !errors.Is(err, embedded.ErrLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second open: %v, want ErrLocked naming %s", err, dir)
	}
}

func TestForeignDirectoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := embedded.Open(dir, embedded.Options{})
	if !errors.Is(err, embedded.ErrForeignDir) || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("open of a foreign dir: %v", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "CRONACTOR_FORMAT")); !os.IsNotExist(statErr) {
		t.Fatal("the store wrote its marker into a foreign directory")
	}
}

func TestNewerFormatIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	marker := filepath.Join(dir, "CRONACTOR_FORMAT")
	if err := os.WriteFile(marker, []byte(`{"format":"cronactor-embedded-event-store","version":99}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = embedded.Open(dir, embedded.Options{})
	if !errors.Is(err, embedded.ErrNewerFormat) || !strings.Contains(err.Error(), "99") {
		t.Fatalf("open of a newer format: %v", err)
	}
	if err := os.WriteFile(marker, []byte(`not json`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err = embedded.Open(dir, embedded.Options{}); !errors.Is(err, embedded.ErrForeignDir) {
		t.Fatalf("open with a garbled marker: %v", err)
	}
}

func TestCorruptionIsReported(t *testing.T) {
	dir := t.TempDir()
	s, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		appendOne(t, s, "task-c")
	}
	s.Close()
	// Damage the middle of every table and log file Pebble wrote.
	files, _ := filepath.Glob(filepath.Join(dir, "events", "*"))
	damaged := 0
	for _, f := range files {
		base := filepath.Base(f)
		if !strings.HasSuffix(base, ".log") && !strings.HasSuffix(base, ".sst") && !strings.HasPrefix(base, "MANIFEST") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil || len(b) < 64 {
			continue
		}
		for i := 16; i < len(b)-16; i += 7 {
			b[i] ^= 0xff
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		damaged++
	}
	if damaged == 0 {
		t.Fatal("found no data file to damage")
	}
	s, err = embedded.Open(dir, embedded.Options{})
	if err == nil {
		// Pebble may open and fail on read instead; the read must then fail.
		defer s.Close()
		got, rerr := s.ReadAll(context.Background(), events.Start, 0)
		if rerr == nil && len(got) == 50 {
			t.Fatal("a damaged store read back all its events without error")
		}
		if rerr == nil {
			t.Fatalf("a damaged store silently returned %d of 50 events", len(got))
		}
		err = rerr
	}
	if !errors.Is(err, embedded.ErrCorrupt) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("corruption error does not say where: %v", err)
	}
	if testing.Verbose() {
		t.Logf("reported: %v", err)
	}
}

// TestCloseDuringAppends: appends racing Close either land durably or fail
// with ErrClosed; none hangs, and every acknowledged one is there on reopen.
func TestCloseDuringAppends(t *testing.T) {
	dir := t.TempDir()
	s, err := embedded.Open(dir, embedded.Options{MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 16
	var (
		mu    sync.Mutex
		acked = map[string]uint64{} // stream → last acknowledged version
	)
	started := make(chan struct{}, writers)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := fmt.Sprintf("task-close-%d", w)
			for i := 0; ; i++ {
				p, _ := events.Propose(events.TaskPaused{}, uuid.Nil, testTime)
				res, err := s.Append(context.Background(), st, events.AnyVersion, p)
				if errors.Is(err, events.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("append: %v", err)
					return
				}
				mu.Lock()
				acked[st] = res.Version
				mu.Unlock()
				if i == 3 {
					started <- struct{}{}
				}
			}
		}()
	}
	for w := 0; w < writers; w++ {
		<-started
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	s, err = embedded.Open(dir, embedded.Options{MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for st, v := range acked {
		got, err := s.ReadStream(context.Background(), st, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(got)) < v+1 {
			t.Fatalf("%s holds %d events, %d were acknowledged", st, len(got), v+1)
		}
	}
}
