package embedded

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// Open opens (creating if needed) the store in dir. It fails with ErrLocked
// if the directory is held, ErrForeignDir if it holds something else, and
// ErrNewerFormat if a newer build wrote it.
func Open(dir string, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("embedded: create data directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s, err := open(vfs.Default, dir, opts)
	if err != nil {
		lock.Close()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

// OpenMemory opens a store that lives in memory only: the same code as Open
// on Pebble's in-memory file system. It is for simulation and tests.
func OpenMemory() (*Store, error) {
	return open(vfs.NewMem(), "/mem", Options{MemTableSize: defaultMemTableSize})
}

func open(fs vfs.FS, dir string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("embedded: create data directory: %w", err)
	}
	if err := checkFormat(fs, dir); err != nil {
		return nil, err
	}
	db, err := pebble.Open(fs.PathJoin(dir, eventsDir), &pebble.Options{
		FS:           fs,
		MemTableSize: opts.MemTableSize,
		Logger:       quietLogger{},
	})
	if err != nil {
		if pebble.IsCorruptionError(err) {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, corruptFile(fs, fs.PathJoin(dir, eventsDir), err), err)
		}
		return nil, fmt.Errorf("embedded: open %s: %w", dir, err)
	}
	s := &Store{
		db:      db,
		dir:     dir,
		dbDir:   fs.PathJoin(dir, eventsDir),
		fs:      fs,
		opts:    opts,
		appends: make(chan *appendReq, appendQueueLen),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
		notify:  make(chan struct{}),
		heads:   map[string]streamVersion{},
	}
	if s.head, err = s.lastPosition(); err != nil {
		db.Close()
		return nil, err
	}
	s.next = s.head
	if err := s.checkCleanShutdown(fs); err != nil {
		db.Close()
		return nil, err
	}
	go s.commitLoop()
	return s, nil
}

// checkFormat writes the format marker into a new directory, and refuses a
// directory holding anything else.
func checkFormat(fs vfs.FS, dir string) error {
	path := fs.PathJoin(dir, formatFile)
	f, err := fs.Open(path)
	if err == nil {
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, markerReadLimit))
		if err != nil {
			return fmt.Errorf("embedded: read %s: %w", path, err)
		}
		var m formatMarker
		if err := json.Unmarshal(b, &m); err != nil || m.Format != formatName {
			return fmt.Errorf("%w: %s is not a cronactor format marker", ErrForeignDir, path)
		}
		if m.Version > formatVersion {
			return fmt.Errorf("%w: %s says version %d, this build reads up to %d", ErrNewerFormat, path, m.Version, formatVersion)
		}
		if m.Version < 1 {
			return fmt.Errorf("%w: %s says version %d", ErrCorrupt, path, m.Version)
		}
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("embedded: open %s: %w", path, err)
	}
	names, err := fs.List(dir)
	if err != nil {
		return fmt.Errorf("embedded: list %s: %w", dir, err)
	}
	for _, n := range names {
		if n != lockFile && n != cleanFile {
			return fmt.Errorf("%w: %s holds %q but no %s", ErrForeignDir, dir, n, formatFile)
		}
	}
	b, _ := json.Marshal(formatMarker{Format: formatName, Version: formatVersion})
	tmp := path + ".tmp"
	w, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("embedded: create %s: %w", tmp, err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		w.Close()
		return fmt.Errorf("embedded: write %s: %w", tmp, err)
	}
	if err := w.Sync(); err != nil {
		w.Close()
		return fmt.Errorf("embedded: sync %s: %w", tmp, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("embedded: close %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, path); err != nil {
		return fmt.Errorf("embedded: rename %s: %w", tmp, err)
	}
	return nil
}

func (s *Store) lastPosition() (uint64, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixGlobal}, UpperBound: []byte{prefixGlobal + 1}})
	if err != nil {
		return 0, s.dbErr("find the end of the global log", err)
	}
	defer it.Close()
	if !it.Last() {
		if err := it.Error(); err != nil {
			return 0, s.dbErr("find the end of the global log", err)
		}
		return 0, nil
	}
	k := it.Key()
	if len(k) != 9 {
		return 0, fmt.Errorf("%w: malformed global key %x in %s", ErrCorrupt, k, s.dbDir)
	}
	return binary.BigEndian.Uint64(k[1:]), nil
}

// cleanShutdown is written by Close. A store reopened after a clean close
// must reach at least that head; if it does not, files were damaged or lost
// while it was closed, and opening fails instead of silently serving less.
type cleanShutdown struct {
	Head uint64 `json:"head"`
}

func (s *Store) writeCleanShutdown() error {
	b, _ := json.Marshal(cleanShutdown{Head: s.head})
	path := s.fs.PathJoin(s.dir, cleanFile)
	f, err := s.fs.Create(path)
	if err != nil {
		return fmt.Errorf("embedded: create %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("embedded: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("embedded: sync %s: %w", path, err)
	}
	return f.Close()
}

func (s *Store) checkCleanShutdown(fs vfs.FS) error {
	path := fs.PathJoin(s.dir, cleanFile)
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("embedded: open %s: %w", path, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, markerReadLimit))
	f.Close()
	if err != nil {
		return fmt.Errorf("embedded: read %s: %w", path, err)
	}
	var c cleanShutdown
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	if s.head < c.Head {
		return fmt.Errorf("%w: %s: the log ends at position %d but was closed cleanly at %d; files under %s are damaged or missing",
			ErrCorrupt, s.dir, s.head, c.Head, fs.PathJoin(s.dir, eventsDir))
	}
	// From here on a crash is not a clean shutdown.
	if err := fs.Remove(path); err != nil {
		return fmt.Errorf("embedded: remove %s: %w", path, err)
	}
	return nil
}
