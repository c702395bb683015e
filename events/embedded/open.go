package embedded

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

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
	_, statErr := os.Stat(dir)
	createdDir := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, diskCondition(fmt.Errorf("embedded: create data directory: %w", err))
	}
	lock, err := lockDir(dir)
	if err != nil {
		if createdDir {
			os.Remove(dir)
		}
		return nil, err
	}
	s, err := open(vfs.Default, dir, opts)
	if err != nil {
		// Leave the directory as it was found: no lock file, and no
		// directory if this open made it (Remove fails on a non-empty one).
		lock.abandon()
		if createdDir {
			os.Remove(dir)
		}
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
		return nil, diskCondition(fmt.Errorf("embedded: create data directory: %w", err))
	}
	dbDir := fs.PathJoin(dir, eventsDir)
	existing, err := checkFormat(fs, dir)
	if err != nil {
		return nil, diskCondition(err)
	}
	if existing {
		if err := checkStoreFiles(fs, dir, dbDir); err != nil {
			return nil, err
		}
	}
	// Pebble replays the newest log up to its first bad record and then
	// drops the log: check it before Pebble sees it.
	damage, err := checkNewestWAL(fs, dbDir)
	if err != nil {
		return nil, err
	}
	var loss *dataLoss
	if damage != nil {
		if !opts.AcceptDataLoss {
			return nil, damage
		}
		if loss, err = keepDamagedLog(fs, dir, damage); err != nil {
			return nil, diskCondition(err)
		}
	}
	db, err := openPebble(fs, dir, opts, existing)
	if err != nil {
		return nil, err
	}
	if !existing {
		if err := writeMarker(fs, dir, false); err != nil {
			db.Close()
			return nil, diskCondition(err)
		}
	}
	s := &Store{
		db:      db,
		dir:     dir,
		dbDir:   dbDir,
		fs:      fs,
		opts:    opts,
		intake:  newIntake(),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
		notify:  make(chan struct{}),
		heads:   newStreamHeads(),
		probe:   make(chan struct{}, 1),
	}
	if s.head, err = s.lastPosition(); err != nil {
		db.Close()
		return nil, err
	}
	s.next = s.head
	cleanHead, err := s.checkCleanShutdown(fs, loss != nil)
	if err != nil {
		db.Close()
		return nil, diskCondition(err)
	}
	if loss != nil {
		if err := dropSnapshots(s); err != nil {
			db.Close()
			return nil, err
		}
		if err := loss.finish(fs, dir, s.head, cleanHead, opts.Logger); err != nil {
			db.Close()
			return nil, diskCondition(err)
		}
	}
	go s.commitLoop()
	return s, nil
}

// openPebble opens the Pebble database under dir. Pebble may create a
// database only in a new store: in an existing one a missing database is an
// error, never a fresh start over old files.
//
// Pebble panics where it cannot go on (a failed manifest write, as on a full
// disk); during Open that happens on this goroutine and becomes an error.
func openPebble(fs vfs.FS, dir string, opts Options, existing bool) (db *pebble.DB, err error) {
	dbDir := fs.PathJoin(dir, eventsDir)
	defer func() {
		if r := recover(); r != nil {
			perr, ok := r.(error)
			if !ok {
				perr = fmt.Errorf("%v", r)
			}
			db, err = nil, diskCondition(fmt.Errorf("embedded: open %s: %w", dir, perr))
		}
	}()
	pace := newPacer(pacedSublevels)
	db, err = pebble.Open(dbDir, &pebble.Options{
		FS:                    pace.fs(fs),
		MemTableSize:          opts.MemTableSize,
		L0CompactionThreshold: l0CompactionThreshold,
		L0StopWritesThreshold: l0StopWritesThreshold,
		Logger:                quietLogger{},
		ErrorIfNotExists:      existing,
		EventListener:         pace.listener(),
	})
	if err != nil {
		if pebble.IsCorruptionError(err) {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, corruptFile(fs, dbDir, err), err)
		}
		return nil, diskCondition(fmt.Errorf("embedded: open %s: %w", dir, err))
	}
	pace.opened(db)
	return db, nil
}

// checkStoreFiles refuses a created store whose Pebble database cannot be
// found: without events/CURRENT Pebble would take the directory for a new
// database and delete every table it holds as obsolete.
func checkStoreFiles(fs vfs.FS, dir, dbDir string) error {
	names, err := fs.List(dbDir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s is missing, but %s says a store was created in %s. Nothing was changed. "+
			"Restore the data directory from a backup", ErrMissingFiles, dbDir, fs.PathJoin(dir, formatFile), dir)
	}
	if err != nil {
		return fmt.Errorf("embedded: list %s: %w", dbDir, err)
	}
	var data []string
	for _, n := range names {
		switch {
		case n == "CURRENT" || strings.HasPrefix(n, "marker.manifest."):
			return nil
		case strings.HasSuffix(n, ".log") || strings.HasSuffix(n, ".sst"):
			data = append(data, n)
		}
	}
	sort.Strings(data)
	shown := data
	if len(shown) > 5 {
		shown = append(shown[:5:5], "…")
	}
	return fmt.Errorf("%w: %s is missing (the store's files there: %d logs and tables: %s): Pebble cannot tell which files are live, "+
		"and opening would start an empty database over them. Nothing was changed. Restore the data directory from a backup",
		ErrMissingFiles, fs.PathJoin(dbDir, "CURRENT"), len(data), strings.Join(shown, ", "))
}

// checkFormat writes the format marker into a new directory, and refuses a
// directory holding anything else. It reports whether a store was already
// created in dir (a marker that is not still marked creating).
func checkFormat(fs vfs.FS, dir string) (existing bool, err error) {
	path := fs.PathJoin(dir, formatFile)
	f, err := fs.Open(path)
	if err == nil {
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, markerReadLimit))
		if err != nil {
			return true, fmt.Errorf("embedded: read %s: %w", path, err)
		}
		var m formatMarker
		if err := json.Unmarshal(b, &m); err != nil || m.Format != formatName {
			return true, fmt.Errorf("%w: %s is not a cronactor format marker", ErrForeignDir, path)
		}
		if m.Version > formatVersion {
			return true, fmt.Errorf("%w: %s says version %d, this build reads up to %d", ErrNewerFormat, path, m.Version, formatVersion)
		}
		if m.Version < 1 {
			return true, fmt.Errorf("%w: %s says version %d", ErrCorrupt, path, m.Version)
		}
		return !m.Creating, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("embedded: open %s: %w", path, err)
	}
	names, err := fs.List(dir)
	if err != nil {
		return false, fmt.Errorf("embedded: list %s: %w", dir, err)
	}
	dbDir := fs.PathJoin(dir, eventsDir)
	for _, n := range names {
		if n == lockFile || n == cleanFile {
			continue
		}
		// An empty events/ is what a first start leaves when it stops
		// between creating it and writing the marker.
		if n == eventsDir {
			if inner, err := fs.List(dbDir); err == nil && len(inner) == 0 {
				continue
			}
		}
		return false, fmt.Errorf("%w: %s holds %q but no %s", ErrForeignDir, dir, n, formatFile)
	}
	if err := fs.MkdirAll(dbDir, 0o755); err != nil {
		return false, fmt.Errorf("embedded: create %s: %w", dbDir, err)
	}
	return false, writeMarker(fs, dir, true)
}

// writeMarker writes the format marker, creating while the first start
// creates the database.
func writeMarker(fs vfs.FS, dir string, creating bool) error {
	b, _ := json.Marshal(formatMarker{Format: formatName, Version: formatVersion, Creating: creating})
	return writeSynced(fs, fs.PathJoin(dir, formatFile), append(b, '\n'))
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
	return writeSynced(s.fs, s.fs.PathJoin(s.dir, cleanFile), b)
}

// checkCleanShutdown compares the head with the one the last clean close
// recorded, and returns that one (0 without a clean close). With
// acceptLoss (the log was just cut on the operator's word) a shorter log is
// accepted and the recorded head goes into the data-loss report.
func (s *Store) checkCleanShutdown(fs vfs.FS, acceptLoss bool) (uint64, error) {
	path := fs.PathJoin(s.dir, cleanFile)
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("embedded: open %s: %w", path, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, markerReadLimit))
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("embedded: read %s: %w", path, err)
	}
	var c cleanShutdown
	if err := json.Unmarshal(b, &c); err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	if s.head < c.Head && !acceptLoss {
		return 0, fmt.Errorf("%w: %s: the log ends at position %d but was closed cleanly at %d; files under %s are damaged or missing. "+
			"Nothing was changed. Restore the data directory from a backup",
			ErrCorrupt, s.dir, s.head, c.Head, fs.PathJoin(s.dir, eventsDir))
	}
	// From here on a crash is not a clean shutdown.
	if err := fs.Remove(path); err != nil {
		return 0, fmt.Errorf("embedded: remove %s: %w", path, err)
	}
	return c.Head, nil
}
