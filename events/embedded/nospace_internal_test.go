package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// fullFS is a file system that can run out of space: with full set, every
// write fails with ENOSPC and, unless hideUsage is set, the free space it
// reports is zero. With hideUsage the free space looks ample while writes
// fail: space taken by someone else between the check and the write.
type fullFS struct {
	vfs.FS
	full      atomic.Bool
	hideUsage bool
	only      string // when set, only writes to files under this path fail
}

func (f *fullFS) Create(name string) (vfs.File, error) {
	file, err := f.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &fullFile{File: file, fs: f, name: name}, nil
}

func (f *fullFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	file, err := f.FS.ReuseForWrite(oldname, newname)
	if err != nil {
		return nil, err
	}
	return &fullFile{File: file, fs: f, name: newname}, nil
}

func (f *fullFS) GetDiskUsage(string) (vfs.DiskUsage, error) {
	if f.full.Load() && !f.hideUsage {
		return vfs.DiskUsage{TotalBytes: 1 << 30}, nil
	}
	return vfs.DiskUsage{AvailBytes: 1 << 30, TotalBytes: 1 << 30}, nil
}

type fullFile struct {
	vfs.File
	fs   *fullFS
	name string
}

func (f *fullFile) failing() bool {
	return f.fs.full.Load() && strings.HasPrefix(f.name, f.fs.only)
}

func (f *fullFile) Write(p []byte) (int, error) {
	if f.failing() {
		return 0, syscall.ENOSPC
	}
	return f.File.Write(p)
}

func (f *fullFile) WriteAt(p []byte, off int64) (int, error) {
	if f.failing() {
		return 0, syscall.ENOSPC
	}
	return f.File.WriteAt(p, off)
}

func appendN(s *Store, stream string, n int) error {
	for i := 0; i < n; i++ {
		p := events.Proposed{ID: uuid.New(), Type: "T", Schema: 1, Data: []byte(`{"x":"` + strings.Repeat("y", 200) + `"}`)}
		if _, err := s.Append(context.Background(), stream, events.AnyVersion, p); err != nil {
			return err
		}
	}
	return nil
}

// TestDiskFullRefusesAppendsAndRecovers: on a full disk appends fail with
// ErrNoSpace (not a panic, not a hang), reads go on, and appends work again
// once space is back, without reopening the store. Both ways of running
// out: the free-space check before a group, and a write that fails anyway.
func TestDiskFullRefusesAppendsAndRecovers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hideUsage bool
	}{{"seen before the write", false}, {"write fails", true}} {
		t.Run(tc.name, func(t *testing.T) {
			fs := &fullFS{FS: vfs.NewMem(), hideUsage: tc.hideUsage}
			var logs bytes.Buffer
			s, err := open(fs, "/data", Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := appendN(s, "task-a", 10); err != nil {
				t.Fatal(err)
			}
			// Readers run through all of it, reopens included.
			stop := make(chan struct{})
			readErr := make(chan error, 4)
			for range 4 {
				go func() {
					for {
						select {
						case <-stop:
							readErr <- nil
							return
						default:
						}
						if all, err := s.ReadAll(context.Background(), events.Start, 0); err != nil || len(all) < 10 {
							readErr <- fmt.Errorf("read %d events: %v", len(all), err)
							return
						}
					}
				}()
			}
			defer func() {
				close(stop)
				for range 4 {
					if err := <-readErr; err != nil {
						t.Error(err)
					}
				}
			}()
			fs.full.Store(true)
			for i := 0; i < 3; i++ {
				err := appendN(s, "task-a", 1)
				if !errors.Is(err, ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("append %d on a full disk: %v, want ErrNoSpace", i, err)
				}
				if !strings.Contains(err.Error(), "no space left on device") {
					t.Fatalf("the error does not say the disk is full: %v", err)
				}
			}
			got, err := s.ReadStream(context.Background(), "task-a", 0, 0)
			if err != nil || len(got) != 10 {
				t.Fatalf("read on a full disk: %d events, %v", len(got), err)
			}
			if all, err := s.ReadAll(context.Background(), events.Start, 0); err != nil || len(all) != 10 {
				t.Fatalf("read of the log on a full disk: %d events, %v", len(all), err)
			}
			fs.full.Store(false)
			if err := appendN(s, "task-a", 5); err != nil {
				t.Fatalf("append once space is back: %v", err)
			}
			got, err = s.ReadStream(context.Background(), "task-a", 0, 0)
			if err != nil || len(got) < 15 {
				t.Fatalf("after recovery: %d events, %v", len(got), err)
			}
			for i, r := range got {
				if r.Version != uint64(i) {
					t.Fatalf("event %d has version %d", i, r.Version)
				}
			}
			if !strings.Contains(logs.String(), "disk full") || !strings.Contains(logs.String(), "appends resume") {
				t.Errorf("log lines: %s", logs.String())
			}
		})
	}
}

// TestOpenOnFullDiskFailsCleanly: a start on a full disk, new or existing
// store, fails with ErrNoSpace and does not panic.
func TestOpenOnFullDiskFailsCleanly(t *testing.T) {
	fs := &fullFS{FS: vfs.NewMem()}
	s, err := open(fs, "/data", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := appendN(s, "task-a", 10); err != nil {
		t.Fatal(err)
	}
	// Leave it as a crash would (no Close): open a second time on a copy is
	// not possible in memory, so close and drop the clean-shutdown marker.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fs.full.Store(true)
	for _, dir := range []string{"/data", "/new"} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("open of %s on a full disk panicked: %v", dir, r)
				}
			}()
			s, err := open(fs, dir, Options{})
			if err == nil {
				s.Close()
				t.Fatalf("open of %s on a full disk succeeded", dir)
			}
			if !errors.Is(err, ErrNoSpace) {
				t.Fatalf("open of %s on a full disk: %v, want ErrNoSpace", dir, err)
			}
		}()
	}
	fs.full.Store(false)
	s, err = open(fs, "/data", Options{})
	if err != nil {
		t.Fatalf("open once space is back: %v", err)
	}
	defer s.Close()
	if s.Head().Commit != 10 {
		t.Fatalf("head %d after the failed starts, want 10", s.Head().Commit)
	}
}

// TestFirstStartOnFullDiskCanBeRetried: a first start that wrote its marker
// but could not create the database (the disk filled in between) is not
// taken for a store with missing files: once space is back, the next start
// creates the database.
func TestFirstStartOnFullDiskCanBeRetried(t *testing.T) {
	fs := &fullFS{FS: vfs.NewMem(), only: "/new/events/"}
	fs.full.Store(true)
	if s, err := open(fs, "/new", Options{}); err == nil {
		s.Close()
		t.Fatal("a first start with no space for the database succeeded")
	} else if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("first start: %v, want ErrNoSpace", err)
	}
	fs.full.Store(false)
	s, err := open(fs, "/new", Options{})
	if err != nil {
		t.Fatalf("first start again, with space: %v", err)
	}
	if err := appendN(s, "task-a", 3); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Now it is a created store: without its database it is refused.
	if err := fs.Remove("/new/events/CURRENT"); err != nil {
		t.Fatal(err)
	}
	if _, err := open(fs, "/new", Options{}); !errors.Is(err, ErrMissingFiles) {
		t.Fatalf("open without CURRENT: %v, want ErrMissingFiles", err)
	}
}
