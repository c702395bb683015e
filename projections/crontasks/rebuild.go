package crontasks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cronactor/cronactor/events"
)

// Rebuild folds the whole log from zero into a fresh view next to cfg.Dir
// (cfg.Dir + ".rebuild"), then swaps it in for the old one, which is
// removed. A rebuild that fails or is cancelled (ctx) removes its partial
// view and leaves the old one in place; one cut short by a crash leaves it
// behind for RemovePartialRebuild (the next Rebuild and the daemon's start
// call it). No View may have cfg.Dir open meanwhile. progress (may be nil)
// is called after every applied batch. It returns the new view's
// checkpoint.
func Rebuild(ctx context.Context, cfg Config, progress func(Progress)) (events.Position, error) {
	if cfg.Dir == "" {
		return events.Position{}, errors.New("crontasks: Config.Dir is required to rebuild")
	}
	if _, err := RemovePartialRebuild(cfg.Dir); err != nil {
		return events.Position{}, err
	}
	tmp := partialDir(cfg.Dir)
	fresh := cfg
	fresh.Dir = tmp
	v, err := Open(fresh)
	if err != nil {
		os.RemoveAll(tmp)
		return events.Position{}, err
	}
	if err := v.CatchUp(ctx, progress); err != nil {
		v.Close()
		if rerr := os.RemoveAll(tmp); rerr != nil {
			return events.Position{}, errors.Join(err, fmt.Errorf("crontasks: remove the partial rebuild %s: %w", tmp, rerr))
		}
		return events.Position{}, err
	}
	cp := v.Checkpoint()
	// Make the new view durable before it replaces the old one.
	if err := v.db.Flush(); err != nil {
		v.Close()
		os.RemoveAll(tmp)
		return events.Position{}, fmt.Errorf("crontasks: flush rebuilt view: %w", err)
	}
	if err := v.Close(); err != nil {
		os.RemoveAll(tmp)
		return events.Position{}, fmt.Errorf("crontasks: close rebuilt view: %w", err)
	}
	old := cfg.Dir + ".old"
	if err := os.RemoveAll(old); err != nil {
		return events.Position{}, fmt.Errorf("crontasks: remove %s: %w", old, err)
	}
	if err := os.Rename(cfg.Dir, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return events.Position{}, fmt.Errorf("crontasks: move the old view aside: %w", err)
	}
	if err := os.Rename(tmp, cfg.Dir); err != nil {
		return events.Position{}, fmt.Errorf("crontasks: swap in the rebuilt view: %w", err)
	}
	if err := os.RemoveAll(old); err != nil {
		return cp, fmt.Errorf("crontasks: remove the old view %s: %w", old, err)
	}
	return cp, nil
}

// partialDir is where Rebuild folds the view of dir before the swap.
func partialDir(dir string) string { return dir + ".rebuild" }

// RemovePartialRebuild removes what a Rebuild of the view in dir left
// behind when its process was killed before the swap (dir + ".rebuild").
// It reports whether there was anything; the view in dir is not touched.
// Nothing may be rebuilding dir meanwhile.
func RemovePartialRebuild(dir string) (bool, error) {
	tmp := partialDir(dir)
	if _, err := os.Lstat(tmp); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err := os.RemoveAll(tmp); err != nil {
		return true, fmt.Errorf("crontasks: remove the partial rebuild %s: %w", tmp, err)
	}
	return true, nil
}

// Point is a past point of the log for AsOf. Set Position, Time or both;
// both must then hold.
type Point struct {
	// Position keeps the events at or before it.
	Position events.Position
	// Time keeps the events decided at or before it. Within one task
	// stream, the first event decided after Time ends that stream's part.
	Time time.Time
}

// IsZero reports whether p names no point.
func (p Point) IsZero() bool { return p.Position.IsZero() && p.Time.IsZero() }

func (p Point) String() string {
	switch {
	case p.Time.IsZero():
		return "position " + p.Position.String()
	case p.Position.IsZero():
		return p.Time.UTC().Format(time.RFC3339Nano)
	}
	return p.Time.UTC().Format(time.RFC3339Nano) + " and position " + p.Position.String()
}

// ParsePoint parses the as_of query parameter and --as-of flag: an RFC 3339
// time, or a global position ("1234", or "commit/prepare").
func ParsePoint(s string) (Point, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return Point{Time: t.UTC()}, nil
	}
	pos, err := events.ParsePosition(s)
	if err != nil || pos.IsZero() {
		return Point{}, badQuery("as_of", "as_of %q: want an RFC 3339 time or a log position", s)
	}
	return Point{Position: pos}, nil
}

// AsOf folds the log up to p into a new in-memory view and returns it for
// querying; the caller closes it. The live view is not touched. cfg.Dir is
// ignored; cfg.Store is the log to read.
func AsOf(ctx context.Context, cfg Config, p Point) (*View, error) {
	if p.IsZero() {
		return nil, badQuery("as_of", "as_of names no point")
	}
	cfg.Dir = ""
	v, err := Open(cfg)
	if err != nil {
		return nil, err
	}
	var head events.Position
	if h, ok := cfg.Store.(events.HeadReader); ok {
		head = h.Head()
	}
	ended := map[string]bool{} // streams past p.Time
	filter := func(page []events.Recorded) ([]events.Recorded, bool) {
		keep := page[:0:0]
		for _, r := range page {
			if !p.Position.IsZero() && p.Position.Less(r.Position) {
				return keep, true
			}
			if !head.IsZero() && head.Less(r.Position) {
				return keep, true
			}
			if !p.Time.IsZero() {
				if ended[r.Stream] || r.At.After(p.Time) {
					ended[r.Stream] = true
					continue
				}
			}
			keep = append(keep, r)
		}
		return keep, false
	}
	if err := v.catchUp(ctx, nil, filter); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

// DirName is the view's directory inside the daemon's data directory.
const DirName = "view"

// DirIn returns the view's directory inside the data directory dataDir.
func DirIn(dataDir string) string { return filepath.Join(dataDir, DirName) }
