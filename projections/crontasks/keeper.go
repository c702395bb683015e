package crontasks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cronactor/cronactor/events"
)

// States of a kept view (Status.State).
const (
	// StateReady: the view answers queries and follows the log.
	StateReady = "ready"
	// StateRebuilding: a fresh view is folding the log from the start (the
	// old one was damaged, or there was none); queries are refused with an
	// UnavailableError until it has caught up.
	StateRebuilding = "rebuilding"
	// StateUnavailable: no view could be opened (the damaged one could not
	// be moved aside, or a fresh one could not be created); retried with a
	// growing pause.
	StateUnavailable = "unavailable"
	// StateStalled: the view stopped following the log for a reason that
	// is not damage (the log could not be read, or holds an event this
	// build cannot fold); it answers queries as of its checkpoint and is
	// retried with a growing pause.
	StateStalled = "stalled"
)

// ErrUnavailable: the view cannot answer queries now (UnavailableError
// says why and how far a rebuild is).
var ErrUnavailable = errors.New("crontasks: the view is not available")

// UnavailableError is the answer to a query while the view is rebuilding
// or unavailable. errors.Is(err, ErrUnavailable) holds.
type UnavailableError struct{ Status Status }

func (e *UnavailableError) Error() string { return e.Status.Message() }
func (e *UnavailableError) Unwrap() error { return ErrUnavailable }

// Status is the state of a kept view, for health checks, metrics and the
// API's answers.
type Status struct {
	State string `json:"state"`
	// Reason says in a few words why the view is not ready ("" when it
	// is); it names no file and quotes no error, so it may be shown to any
	// client.
	Reason string `json:"reason,omitempty"`
	// Err is the last failure in full (files, errors), for the log and
	// for operators; "" when none since the last change of state.
	Err string `json:"-"`
	// Since is when the view entered State.
	Since time.Time `json:"since"`
	// Position is the view's checkpoint, Head the log's end when the store
	// tells it.
	Position events.Position `json:"position"`
	Head     events.Position `json:"head"`
	// Progress is the part of the log folded, 0 to 1: the checkpoint's
	// share of the head (1 when the head is unknown and the view ready).
	Progress float64 `json:"progress"`
	// MovedAside is where the last damaged view was moved ("" if none).
	MovedAside string `json:"moved_aside,omitempty"`
	// Rebuilds counts the views started afresh since the Keeper opened.
	Rebuilds int `json:"rebuilds"`
}

// Message is the sentence the API answers a refused query with, e.g. "the
// cron_tasks view is rebuilding: 42% (position 420 of 1000)".
func (s Status) Message() string {
	switch s.State {
	case StateRebuilding:
		at := fmt.Sprintf("position %s", s.Position)
		if !s.Head.IsZero() {
			at += fmt.Sprintf(" of %s", s.Head)
		}
		msg := fmt.Sprintf("the cron_tasks view is rebuilding: %d%% (%s)", int(s.Progress*100), at)
		if s.Reason != "" {
			msg += "; " + s.Reason
		}
		return msg
	case StateUnavailable:
		return "the cron_tasks view is unavailable: " + s.Reason
	case StateStalled:
		return "the cron_tasks view stopped following the log at position " + s.Position.String() + "; " + s.Reason
	}
	return "the cron_tasks view is ready"
}

// Keeper keeps the cron_tasks view of a running daemon usable whatever
// happens to its files. The view is derived data: when it is found damaged
// (on open, by the applier or by a query; see Damaged), Keeper moves its
// directory aside to a dated sibling (<dir>.damaged-<UTC time>, logged), opens a fresh one and folds the log into it in the background,
// logging progress. The newest Config.KeepDamaged of those siblings are kept
// (default 3); older ones are removed, logged. Meanwhile View answers an UnavailableError and Status
// says how far the rebuild is. The event log is only ever read.
//
// Concurrency: a Keeper is safe for concurrent use; Run runs in one
// goroutine.
type Keeper struct {
	cfg Config // with defaults
	fs  vfs.FS

	mu         sync.Mutex
	view       *View // nil while unavailable
	state      string
	reason     string
	since      time.Time
	movedAside string
	rebuilds   int
	lastErr    string // Status.Err
	// replace is set when the directory holds a damaged view that must be
	// moved aside before a fresh one is opened.
	replace bool
	closed  bool
	// changed is closed and replaced whenever the state changes.
	changed chan struct{}
}

// OpenKeeper opens the view in cfg.Dir (or in memory) like Open, but a
// damaged view is moved aside and replaced by a fresh, empty one that Run
// then rebuilds (if that fails too, the Keeper starts unavailable and Run
// retries). A view of another log (ErrAheadOfLog), a directory that is
// not a view (ErrForeignDB) and a view that cannot be opened for another
// reason (permissions, a lock) are refused as by Open: they need an
// operator.
func OpenKeeper(cfg Config) (*Keeper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	k := &Keeper{cfg: cfg.withDefaults(), fs: cfg.FS, changed: make(chan struct{})}
	if k.fs == nil {
		k.fs = vfs.Default
	}
	k.since = k.cfg.Archetype.Now()
	v, err := Open(cfg)
	if Damaged(err) {
		k.replace = true
		if err := k.reopen(err); err != nil {
			// Unavailable: Run retries; the daemon starts all the same.
			k.cfg.Archetype.Logger.Error("cron_tasks view: no view yet; retrying in the background", "err", err)
		}
		return k, nil
	}
	if err != nil {
		return nil, err
	}
	k.view, k.state = v, StateReady
	if head := k.head(); v.Checkpoint().IsZero() && !head.IsZero() {
		// A new view (or one of an older format, cleared) over a log that
		// has events: fold it in the background like any rebuild.
		k.state, k.reason = StateRebuilding, "the view is new"
	}
	return k, nil
}

func (k *Keeper) head() events.Position {
	if h, ok := k.cfg.Store.(events.HeadReader); ok {
		return h.Head()
	}
	return events.Position{}
}

// reopen moves a damaged view aside (when k.replace) and opens a fresh one
// in its place, in state rebuilding. On failure the Keeper is unavailable
// and the error is returned.
func (k *Keeper) reopen(cause error) error {
	log := k.cfg.Archetype.Logger
	if k.replace && k.cfg.Dir != "" {
		if _, err := k.fs.Stat(k.cfg.Dir); err == nil {
			moved, err := k.moveAside()
			if err != nil {
				err = fmt.Errorf("crontasks: move the damaged view %s aside: %w", k.cfg.Dir, err)
				k.set(nil, StateUnavailable, "the damaged view cannot be moved aside; retrying")
				k.failed(err)
				return err
			}
			log.Error("the cron_tasks view is damaged: moved it aside and rebuilding it from the log; the event log is untouched",
				"dir", k.cfg.Dir, "moved_to", moved, "err", cause)
			k.mu.Lock()
			k.movedAside = moved
			k.mu.Unlock()
			k.pruneDamaged()
		}
	}
	_, existed := k.fs.Stat(k.cfg.Dir)
	v, err := Open(k.cfg)
	if err != nil {
		if k.cfg.Dir != "" && existed != nil {
			// Nothing but this attempt's own files: start clean next time.
			_ = k.fs.RemoveAll(k.cfg.Dir)
		} else if Damaged(err) {
			// Left by an earlier attempt that could not clean up: the
			// next attempt moves it aside.
			k.mu.Lock()
			k.replace = true
			k.mu.Unlock()
		}
		err = fmt.Errorf("crontasks: open a fresh view: %w", err)
		k.set(nil, StateUnavailable, "a fresh view cannot be opened; retrying")
		k.failed(err)
		return err
	}
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		_ = v.Close()
		return ErrClosed
	}
	k.replace = false
	k.rebuilds++
	k.mu.Unlock()
	reason := "the previous view was damaged"
	if k.cfg.Dir != "" {
		reason += " and moved aside"
	}
	k.set(v, StateRebuilding, reason)
	return nil
}

// damagedSuffix is what a moved-aside view's directory adds to Dir, before
// the time it was moved.
const damagedSuffix = ".damaged-"

// damagedTime is the layout of the time in a moved-aside view's name; it
// sorts as text in time order.
const damagedTime = "20060102T150405Z"

// moveAside renames the view's directory to a dated sibling that does not
// exist yet (<dir>.damaged-<time>, then -2, -3… within the same second).
func (k *Keeper) moveAside() (string, error) {
	base := k.cfg.Dir + damagedSuffix + k.cfg.Archetype.Now().UTC().Format(damagedTime)
	to := base
	for i := 2; ; i++ {
		if _, err := k.fs.Stat(to); errors.Is(err, os.ErrNotExist) {
			break
		} else if err != nil {
			return "", err
		}
		to = fmt.Sprintf("%s-%d", base, i)
	}
	if err := k.fs.Rename(k.cfg.Dir, to); err != nil {
		return "", err
	}
	return to, nil
}

// movedAside is a moved-aside view's directory, ordered by when it was
// moved.
type movedAside struct {
	name string
	at   string // the damagedTime text
	seq  int    // 1, then the -N suffix
}

// pruneDamaged removes the moved-aside views older than the newest
// KeepDamaged. A failure to list or remove is logged and left for the next
// move: it does not hold up the rebuild.
func (k *Keeper) pruneDamaged() {
	log := k.cfg.Archetype.Logger
	parent, prefix := k.fs.PathDir(k.cfg.Dir), k.fs.PathBase(k.cfg.Dir)+damagedSuffix
	names, err := k.fs.List(parent)
	if err != nil {
		log.Warn("cron_tasks view: cannot list the damaged views moved aside", "dir", parent, "err", err)
		return
	}
	var found []movedAside
	for _, n := range names {
		if m, ok := parseMovedAside(n, prefix); ok {
			found = append(found, m)
		}
	}
	if len(found) <= k.cfg.KeepDamaged {
		return
	}
	slices.SortFunc(found, func(a, b movedAside) int {
		if c := strings.Compare(a.at, b.at); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	for _, m := range found[:len(found)-k.cfg.KeepDamaged] {
		path := k.fs.PathJoin(parent, m.name)
		if err := k.fs.RemoveAll(path); err != nil {
			log.Warn("cron_tasks view: cannot remove an old damaged view", "dir", path, "err", err)
			continue
		}
		log.Info("cron_tasks view: removed an old damaged view", "dir", path, "keep", k.cfg.KeepDamaged)
	}
}

// parseMovedAside reads a name moveAside gave (prefix, a damagedTime, an
// optional -N); other names are not the Keeper's.
func parseMovedAside(name, prefix string) (movedAside, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || len(rest) < len(damagedTime) {
		return movedAside{}, false
	}
	at, suffix := rest[:len(damagedTime)], rest[len(damagedTime):]
	if _, err := time.Parse(damagedTime, at); err != nil {
		return movedAside{}, false
	}
	m := movedAside{name: name, at: at, seq: 1}
	if suffix != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(suffix, "-"))
		if !strings.HasPrefix(suffix, "-") || err != nil || n < 2 {
			return movedAside{}, false
		}
		m.seq = n
	}
	return m, true
}

func (k *Keeper) set(v *View, state, reason string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.view = v
	k.setLocked(state, reason)
}

// setLocked changes the state and tells whoever waits on Changed.
func (k *Keeper) setLocked(state, reason string) {
	k.state, k.reason, k.since, k.lastErr = state, reason, k.cfg.Archetype.Now(), ""
	k.signalLocked()
}

func (k *Keeper) signalLocked() {
	close(k.changed)
	k.changed = make(chan struct{})
}

// failed records the last failure (Status.Err).
func (k *Keeper) failed(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lastErr = err.Error()
	k.signalLocked()
}

// Changed returns a channel closed at the next change of state.
func (k *Keeper) Changed() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.changed
}

// View returns the view to query, or an *UnavailableError while it is
// rebuilding or unavailable (ErrClosed once the Keeper is closed). A view
// returned may still turn out damaged during the query: the query then
// fails with an error Damaged reports, and Status tells what follows.
func (k *Keeper) View() (*View, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, ErrClosed
	}
	if k.view != nil && (k.state == StateReady || k.state == StateStalled) && k.view.Broken() == nil {
		return k.view, nil
	}
	return nil, &UnavailableError{Status: k.statusLocked()}
}

// Status reports the kept view's state and progress.
func (k *Keeper) Status() Status {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.statusLocked()
}

func (k *Keeper) statusLocked() Status {
	s := Status{State: k.state, Reason: k.reason, Err: k.lastErr, Since: k.since, MovedAside: k.movedAside, Rebuilds: k.rebuilds, Head: k.head()}
	if k.view != nil {
		s.Position = k.view.Checkpoint()
		if err := k.view.Broken(); err != nil && k.state != StateUnavailable {
			// Found damaged; Run is about to replace it.
			s.State, s.Reason, s.Err, s.Position = StateRebuilding, "the view was found damaged", err.Error(), events.Position{}
		}
	}
	switch {
	case s.State == StateReady && s.Head.IsZero():
		s.Progress = 1
	case !s.Head.IsZero() && s.Head.Commit > 0:
		s.Progress = min(1, float64(s.Position.Commit)/float64(s.Head.Commit))
	}
	return s
}

// Lag is the current view's Lag (zero while there is none).
func (k *Keeper) Lag() Lag {
	k.mu.Lock()
	v := k.view
	k.mu.Unlock()
	if v == nil {
		return Lag{}
	}
	return v.Lag()
}

// CatchUp folds what the log holds now into a ready view before the
// daemon starts serving (a view being rebuilt is left to Run). A view found
// damaged is replaced and CatchUp returns nil: Run rebuilds it. Other
// errors are returned.
func (k *Keeper) CatchUp(ctx context.Context) error {
	k.mu.Lock()
	v, state := k.view, k.state
	k.mu.Unlock()
	if v == nil || state != StateReady {
		return nil
	}
	err := v.CatchUp(ctx, nil)
	if Damaged(err) {
		k.damaged(v, err)
		return nil
	}
	return err
}

// damaged closes a view found damaged and opens a fresh one in its place
// (or leaves the Keeper unavailable, for Run to retry).
func (k *Keeper) damaged(v *View, cause error) {
	v.markBroken(cause)
	_ = v.Close()
	k.mu.Lock()
	k.replace = true
	k.mu.Unlock()
	_ = k.reopen(cause)
}

// Retry pauses after a failure, doubling from the first to the last.
const (
	firstRetry = time.Second
	lastRetry  = 30 * time.Second
)

// progressEvery is how often (by the Archetype's clock) a rebuild logs
// its progress.
const progressEvery = 2 * time.Second

// Run keeps the view following the log until ctx ends (ctx.Err()) or the
// Keeper is closed (ErrClosed). It rebuilds a fresh view from the log,
// logging progress, then follows the log live; a view found damaged is
// moved aside and rebuilt; other failures (the log unreadable, an event
// this build cannot fold) stall the view, which is retried after a pause
// that doubles from 1 s to 30 s. It never returns for a failure of the
// view: whatever the view does, the daemon goes on.
func (k *Keeper) Run(ctx context.Context) error {
	log := k.cfg.Archetype.Logger
	pause := firstRetry
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		k.mu.Lock()
		v, state, closed := k.view, k.state, k.closed
		k.mu.Unlock()
		if closed {
			return ErrClosed
		}
		var err error
		switch {
		case v == nil:
			err = k.reopen(nil)
		case state == StateRebuilding:
			err = k.rebuild(ctx, v)
		default:
			err = v.Run(ctx)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		k.mu.Lock()
		closed = k.closed
		k.mu.Unlock()
		if closed {
			return ErrClosed
		}
		if err == nil {
			pause = firstRetry
			continue
		}
		if v != nil && (Damaged(err) || v.Broken() != nil) {
			if v.Broken() != nil {
				err = v.Broken()
			}
			k.damaged(v, err)
			continue
		}
		if v != nil {
			k.mu.Lock()
			if k.view == v {
				state := StateStalled
				if k.state == StateRebuilding {
					// A rebuild stays a rebuild: a half-folded view is
					// never queried.
					state = StateRebuilding
				}
				reason := "stopped by an error; retrying"
				if state == StateRebuilding {
					reason = "held up by an error; retrying"
				}
				k.setLocked(state, reason)
				k.lastErr = err.Error()
			}
			k.mu.Unlock()
		}
		log.Error("cron_tasks view: retrying after a failure", "err", err, "retry_in", pause.String())
		if err := k.pause(ctx, pause); err != nil {
			return err
		}
		pause = min(2*pause, lastRetry)
		if v != nil {
			// Follow again from the checkpoint.
			k.mu.Lock()
			if k.view == v && k.state == StateStalled {
				k.setLocked(StateReady, "")
			}
			k.mu.Unlock()
		}
	}
}

// pause waits d on the Archetype's clock, or until ctx ends.
func (k *Keeper) pause(ctx context.Context, d time.Duration) error {
	woke := make(chan struct{})
	t := k.cfg.Archetype.Clock.AfterFunc(d, func() { close(woke) })
	select {
	case <-woke:
		return nil
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	}
}

// rebuild folds the log into the fresh view v, logging progress, then
// marks it ready.
func (k *Keeper) rebuild(ctx context.Context, v *View) error {
	log := k.cfg.Archetype.Logger
	clk := k.cfg.Archetype.Clock
	start := clk.Now()
	head := k.head()
	log.Info("cron_tasks view rebuilding from the log", "dir", k.cfg.Dir, "from", v.Checkpoint().String(), "head", head.String())
	next := start.Add(progressEvery)
	rate := k.cfg.RebuildRate
	if rate > 0 {
		// Ten pages a second at most, each followed by its share of time.
		v.catchUpPage.Store(int64(max(1, min(k.cfg.BatchSize, rate/10))))
		defer v.catchUpPage.Store(0)
	}
	var throttleErr error
	err := v.CatchUp(ctx, func(p Progress) {
		if rate > 0 && throttleErr == nil {
			// Folded p.Applied events; at rate they take this long.
			due := start.Add(time.Duration(float64(p.Applied) / float64(rate) * float64(time.Second)))
			if d := due.Sub(clk.Now()); d > 0 {
				throttleErr = k.pause(ctx, d)
			}
		}
		if now := clk.Now(); !now.Before(next) {
			next = now.Add(progressEvery)
			s := k.Status()
			log.Info("cron_tasks view rebuilding", "position", p.Position.String(), "head", s.Head.String(),
				"percent", int(s.Progress*100), "events", p.Applied, "events_per_s", int(float64(p.Applied)/max(p.Elapsed.Seconds(), 1e-3)))
		}
	})
	if err == nil {
		err = throttleErr
	}
	if err != nil {
		return err
	}
	k.mu.Lock()
	if k.view == v && k.state == StateRebuilding {
		k.setLocked(StateReady, "")
	}
	k.mu.Unlock()
	log.Info("cron_tasks view rebuilt", "position", v.Checkpoint().String(), "elapsed", clk.Now().Sub(start).String())
	return nil
}

// Close closes the current view; Run returns ErrClosed.
func (k *Keeper) Close() error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	k.closed = true
	v := k.view
	k.mu.Unlock()
	if v == nil {
		return nil
	}
	return v.Close()
}

// RowOf folds the events of one task stream (all of them, in order) into
// the task's row: the row the view holds once it has folded them, since a
// row depends on its own stream only. The API answers writes with it while
// the view is rebuilding.
func RowOf(recs []events.Recorded) (Task, error) {
	var t *Task
	for _, r := range recs {
		ev, err := events.Decode(r)
		if err != nil {
			return Task{}, fmt.Errorf("crontasks: fold %s@%d: %w", r.Stream, r.Version, err)
		}
		if t, err = Evolve(t, r.Metadata, ev); err != nil {
			return Task{}, err
		}
	}
	if t == nil {
		return Task{}, ErrNotFound
	}
	return *t, nil
}
