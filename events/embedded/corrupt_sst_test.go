package embedded_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// TestCorruptTableIsReportedWithItsFile damages the table files of a store
// whose memtable was flushed, and wants ErrCorrupt naming the file.
func TestCorruptTableIsReportedWithItsFile(t *testing.T) {
	dir := t.TempDir()
	s, err := embedded.Open(dir, embedded.Options{MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]events.Proposed, 100)
	for i := 0; i < 40; i++ {
		for j := range batch {
			batch[j], _ = events.Propose(events.TaskDeleted{Reason: strings.Repeat("x", 200)}, uuid.Nil, testTime)
		}
		if _, err := s.Append(context.Background(), "task-sst", events.AnyVersion, batch...); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	tables, _ := filepath.Glob(filepath.Join(dir, "events", "*.sst"))
	if len(tables) == 0 {
		t.Fatal("no table file was written")
	}
	for _, f := range tables {
		b, _ := os.ReadFile(f)
		for i := 100; i < len(b)/2; i += 5 {
			b[i] ^= 0x55
		}
		os.WriteFile(f, b, 0o644)
	}
	s, err = embedded.Open(dir, embedded.Options{})
	if err == nil {
		defer s.Close()
		_, err = s.ReadAll(context.Background(), events.Start, 0)
	}
	if !errors.Is(err, embedded.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(tables[0])) {
		t.Fatalf("a damaged table %s was reported as %v", tables[0], err)
	}
	if testing.Verbose() {
		t.Logf("reported: %v", err)
	}
}
