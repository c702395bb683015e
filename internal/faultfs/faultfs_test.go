package faultfs_test

import (
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"
	"github.com/cronactor/cronactor/internal/faultfs"
)

// failing is an injector that fails every write while on is set, naming
// the paths it failed.
type failing struct {
	on     atomic.Bool
	failed []string
}

func (f *failing) MaybeError(op errorfs.Op, path string) error {
	if f.on.Load() && op.OpKind() == errorfs.OpKindWrite {
		f.failed = append(f.failed, path)
		return &os.PathError{Op: "write", Path: path, Err: syscall.EIO}
	}
	return nil
}

// TestReusedFileFails: a file reused for writing, as Pebble reuses an old
// WAL as its new one, fails its writes and syncs like a created file
// (through errorfs alone they succeed).
func TestReusedFileFails(t *testing.T) {
	inj := &failing{}
	fs := faultfs.Wrap(vfs.NewMem(), inj)
	old, err := fs.Create("000002.log")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Write([]byte("the old log")); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	wal, err := fs.ReuseForWrite("000002.log", "000005.log")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wal.Write([]byte("before the fault")); err != nil {
		t.Fatalf("write before the fault: %v", err)
	}
	inj.on.Store(true)
	if _, err := wal.Write([]byte("during the fault")); !errors.Is(err, syscall.EIO) {
		t.Errorf("write to the reused file during the fault: %v, want EIO", err)
	}
	if err := wal.Sync(); !errors.Is(err, syscall.EIO) {
		t.Errorf("sync of the reused file during the fault: %v, want EIO", err)
	}
	if len(inj.failed) == 0 || inj.failed[0] != "000005.log" {
		t.Errorf("failed paths %q, want the reused file's new name first", inj.failed)
	}
	if _, err := fs.ReuseForWrite("000005.log", "000007.log"); !errors.Is(err, syscall.EIO) {
		t.Errorf("reuse during the fault: %v, want EIO", err)
	}
	inj.on.Store(false)
	if _, err := wal.Write([]byte("after the fault")); err != nil {
		t.Errorf("write after the fault: %v", err)
	}
}
