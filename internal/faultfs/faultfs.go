// Package faultfs injects errors into the file operations of a Pebble
// database, for tests of what happens when its disk fails.
//
// It is pebble's errorfs with one hole closed. errorfs.FS.ReuseForWrite
// (pebble v1.1.5) hands back the reused file unwrapped, and Pebble reuses
// an obsolete WAL file as the new WAL whenever it rotates its memtable (the
// first time after about 256 KiB of writes). From then on the WAL's writes
// and syncs never meet the injector: a disk a test made fail every write
// takes every commit, and whether the test sees its fault depends on how
// many bytes were written before it. Here the reused file is wrapped like
// every other.
//
// Concurrency: an FS is safe for concurrent use if its injector is.
package faultfs

import (
	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"
)

// FS is errorfs.FS whose ReuseForWrite injects errors into the reused file.
type FS struct {
	*errorfs.FS
	inj errorfs.Injector
}

// Wrap is errorfs.Wrap: every operation on fs, and on the files it opens,
// first asks inj whether to fail.
func Wrap(fs vfs.FS, inj errorfs.Injector) *FS {
	return &FS{FS: errorfs.Wrap(fs, inj), inj: inj}
}

// ReuseForWrite renames oldname to newname for writing, as the wrapped FS
// does, and wraps the file so that its operations ask the injector (with
// newname as their path).
func (fs *FS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname)
	if err != nil {
		return nil, err
	}
	return errorfs.WrapFile(f, errorfs.InjectorFunc(func(op errorfs.Op, _ string) error {
		return fs.inj.MaybeError(op, newname)
	})), nil
}
