package embedded

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// gateFS holds the next WAL sync until released, so a test can look at the
// store while an append is applied but not yet durable.
type gateFS struct {
	vfs.FS
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (g *gateFS) Create(name string) (vfs.File, error) {
	f, err := g.FS.Create(name)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &gateFile{File: f, g: g}, nil
}

func (g *gateFS) hold() {
	if g.armed.CompareAndSwap(true, false) {
		g.entered <- struct{}{}
		<-g.release
	}
}

type gateFile struct {
	vfs.File
	g *gateFS
}

func (f *gateFile) Sync() error     { f.g.hold(); return f.File.Sync() }
func (f *gateFile) SyncData() error { f.g.hold(); return f.File.SyncData() }

// TestNothingVisibleBeforeDurable: Pebble makes a batch readable before its
// WAL sync ends; the store must show no reader an event, and acknowledge no
// append, until the sync is done.
func TestNothingVisibleBeforeDurable(t *testing.T) {
	g := &gateFS{FS: vfs.NewMem(), entered: make(chan struct{}), release: make(chan struct{})}
	s, err := open(g, "/mem", Options{MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const stream = "task-durable"
	g.armed.Store(true)
	acked := make(chan error, 1)
	go func() {
		_, err := s.Append(ctx, stream, events.NoStream, events.Proposed{ID: uuid.New(), Type: "T", Schema: 1, Data: []byte(`{}`)})
		acked <- err
	}()
	select {
	case <-g.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the append never reached its WAL sync")
	}
	// Wait until Pebble itself shows the batch, so the checks below are not
	// vacuous.
	for {
		_, closer, err := s.db.Get(streamKey(stream, 0))
		if err == nil {
			closer.Close()
			break
		}
		if !errors.Is(err, pebble.ErrNotFound) {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
	if _, err := s.ReadStream(ctx, stream, 0, 0); !errors.Is(err, events.ErrStreamNotFound) {
		t.Fatalf("ReadStream during the sync: %v, want ErrStreamNotFound", err)
	}
	if all, err := s.ReadAll(ctx, events.Start, 0); err != nil || len(all) != 0 {
		t.Fatalf("ReadAll during the sync: %d events, %v", len(all), err)
	}
	if !s.Head().IsZero() {
		t.Fatalf("Head during the sync = %v", s.Head())
	}
	select {
	case err := <-acked:
		t.Fatalf("append acknowledged (%v) before its sync ended", err)
	default:
	}
	close(g.release)
	if err := <-acked; err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadStream(ctx, stream, 0, 0); err != nil || len(got) != 1 {
		t.Fatalf("ReadStream after the sync: %d events, %v", len(got), err)
	}
}
