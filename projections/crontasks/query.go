package crontasks

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Page sizes.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Query selects rows of the view. Every set field must match; the zero
// Query lists all tasks. Results come in a stable order: by owner then name
// then id when Owner is set; by next_run then id when DueBefore is set (and
// Owner is not); else by id.
type Query struct {
	// Owner matches the owner reference exactly.
	Owner string
	// Status is "", active, paused, finished or deleted.
	Status string
	// DueBefore, when not zero, keeps active tasks whose next_run is at or
	// before it (paused and deleted tasks are never due).
	DueBefore time.Time
	// Limit is the page size: 0 means DefaultLimit; at most MaxLimit.
	Limit int
	// Cursor continues from the page that returned it ("" starts at the
	// beginning). A cursor is only valid for the same Query fields.
	Cursor string
}

// Page is one page of query results. Next is the cursor of the following
// page, "" on the last page.
type Page struct {
	Tasks []Task `json:"tasks"`
	Next  string `json:"next,omitempty"`
}

// Validate names the first invalid field (as in the HTTP API's query
// parameters).
func (q Query) Validate() error {
	switch q.Status {
	case "", StatusActive, StatusPaused, StatusFinished, StatusDeleted:
	default:
		return badQuery("status", "status %q: want active, paused, finished or deleted", q.Status)
	}
	if q.Limit < 0 || q.Limit > MaxLimit {
		return badQuery("limit", "limit %d out of 1..%d", q.Limit, MaxLimit)
	}
	if q.Cursor != "" {
		if _, err := q.decodeCursor(); err != nil {
			return err
		}
	}
	return nil
}

// Index tags of cursors.
const (
	cursorAll   = 'A'
	cursorOwner = 'O'
	cursorDue   = 'D'
	cursorState = 'S'
)

// plan is the index a query scans and its bounds.
func (q Query) plan() (tag byte, lower, upper []byte) {
	switch {
	case q.Owner != "":
		p := ownerPrefix(q.Owner)
		return cursorOwner, p, prefixEnd(p)
	case !q.DueBefore.IsZero():
		return cursorDue, duePrefix, append(append([]byte(nil), duePrefix...), dueTime(q.DueBefore.Add(1))...)
	case q.Status != "":
		p := statusPrefix(q.Status)
		return cursorState, p, prefixEnd(p)
	default:
		p := []byte{prefixTask, '/'}
		return cursorAll, p, prefixEnd(p)
	}
}

func (q Query) decodeCursor() ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
	if err != nil || len(b) < 1 {
		return nil, badQuery("cursor", "cursor is malformed")
	}
	tag, lower, upper := q.plan()
	key := b[1:]
	if b[0] != tag || !bytes.HasPrefix(key, lower[:2]) || bytes.Compare(key, lower) < 0 || (upper != nil && bytes.Compare(key, upper) >= 0) {
		return nil, badQuery("cursor", "cursor belongs to another query")
	}
	return key, nil
}

func encodeCursor(tag byte, key []byte) string {
	return base64.RawURLEncoding.EncodeToString(append([]byte{tag}, key...))
}

func (q Query) matches(t *Task) bool {
	if q.Owner != "" && t.Owner != q.Owner {
		return false
	}
	if q.Status != "" && t.Status != q.Status {
		return false
	}
	if !q.DueBefore.IsZero() && (t.Status != StatusActive || t.NextRun == nil || t.NextRun.After(q.DueBefore)) {
		return false
	}
	return true
}

// use holds the view open for a read.
func (v *View) use() (release func(), err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, ErrClosed
	}
	if v.brokenErr != nil {
		return nil, v.brokenErr
	}
	v.readers.Add(1) // Close waits for readers before closing Pebble

	return v.readers.Done, nil
}

// Get returns the row of one task.
func (v *View) Get(ctx context.Context, id uuid.UUID) (_ Task, err error) {
	release, err := v.use()
	if err != nil {
		return Task{}, err
	}
	defer release()
	defer v.guard(&err)()
	t, err := v.lookup(v.db, id)
	if err != nil {
		return Task{}, err
	}
	return *t, nil
}

// Query returns one page of the rows q selects, read from one consistent
// snapshot of the view.
func (v *View) Query(ctx context.Context, q Query) (_ Page, err error) {
	if err := q.Validate(); err != nil {
		return Page{}, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	release, err := v.use()
	if err != nil {
		return Page{}, err
	}
	defer release()
	defer v.guard(&err)()
	snap := v.db.NewSnapshot()
	defer snap.Close()
	tag, lower, upper := q.plan()
	it, err := v.iter(snap, lower, upper)
	if err != nil {
		return Page{}, fmt.Errorf("crontasks: query: %w", err)
	}
	defer it.Close()
	valid := it.First()
	if q.Cursor != "" {
		key, _ := q.decodeCursor()
		valid = it.SeekGE(append(append([]byte(nil), key...), 0))
	}
	page := Page{Tasks: []Task{}}
	var lastKey []byte
	for ; valid; valid = it.Next() {
		if err := ctx.Err(); err != nil {
			return Page{}, err
		}
		var t *Task
		if tag == cursorAll {
			t = new(Task)
			if err := json.Unmarshal(it.Value(), t); err != nil {
				return Page{}, fmt.Errorf("%w: row %x: %v", ErrCorrupt, it.Key(), err)
			}
		} else {
			k := it.Key()
			if len(k) < 16 {
				return Page{}, fmt.Errorf("%w: index key %x", ErrCorrupt, k)
			}
			id, _ := uuid.FromBytes(k[len(k)-16:])
			if t, err = v.lookup(snap, id); err != nil {
				if errors.Is(err, ErrNotFound) {
					return Page{}, fmt.Errorf("%w: index key %x names a missing task", ErrCorrupt, k)
				}
				return Page{}, err
			}
		}
		if !q.matches(t) {
			continue
		}
		if len(page.Tasks) == limit {
			page.Next = encodeCursor(tag, lastKey)
			break
		}
		page.Tasks = append(page.Tasks, *t)
		lastKey = append(lastKey[:0], it.Key()...)
	}
	if err := it.Error(); err != nil {
		return Page{}, fmt.Errorf("crontasks: query: %w", err)
	}
	return page, nil
}

// All pages through every task, by id.
func (v *View) All(ctx context.Context, limit int, cursor string) (Page, error) {
	return v.Query(ctx, Query{Limit: limit, Cursor: cursor})
}

// ByOwner pages through the tasks of one owner, by name then id. Deleting
// an owner (R6) walks this.
func (v *View) ByOwner(ctx context.Context, owner string, limit int, cursor string) (Page, error) {
	if owner == "" {
		return Page{}, badQuery("owner", "owner is empty")
	}
	return v.Query(ctx, Query{Owner: owner, Limit: limit, Cursor: cursor})
}

// ByStatus pages through the tasks with one status, by id.
func (v *View) ByStatus(ctx context.Context, status string, limit int, cursor string) (Page, error) {
	if status == "" {
		return Page{}, badQuery("status", "status is empty")
	}
	return v.Query(ctx, Query{Status: status, Limit: limit, Cursor: cursor})
}

// DueBefore pages through the active tasks whose next_run is at or before
// t, by next_run then id.
func (v *View) DueBefore(ctx context.Context, t time.Time, limit int, cursor string) (Page, error) {
	if t.IsZero() {
		return Page{}, badQuery("due_before", "due_before is zero")
	}
	return v.Query(ctx, Query{DueBefore: t, Limit: limit, Cursor: cursor})
}

// ByOwnerName returns the tasks of owner with that name (R6 keeps it to at
// most one live task; deleted ones stay in the view), by id.
func (v *View) ByOwnerName(ctx context.Context, owner, name string) (_ []Task, err error) {
	release, err := v.use()
	if err != nil {
		return nil, err
	}
	defer release()
	defer v.guard(&err)()
	snap := v.db.NewSnapshot()
	defer snap.Close()
	p := ownerNamePrefix(owner, name)
	it, err := v.iter(snap, p, prefixEnd(p))
	if err != nil {
		return nil, fmt.Errorf("crontasks: query: %w", err)
	}
	defer it.Close()
	var out []Task
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		if len(k) != len(p)+16 {
			return nil, fmt.Errorf("%w: owner index key %x", ErrCorrupt, k)
		}
		id, _ := uuid.FromBytes(k[len(p):])
		t, err := v.lookup(snap, id)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, it.Error()
}
