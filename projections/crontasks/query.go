package crontasks

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/google/uuid"
)

// ErrBadQuery: a query field out of its limits; the message names it.
var ErrBadQuery = errors.New("crontasks: invalid query")

// Query limits.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Query selects rows of the view. Set fields combine with AND. Rows come in
// a stable order: by next_run then id when DueBefore is set and Owner is
// not, else by id (within the owner when Owner is set).
type Query struct {
	// Owner keeps the tasks of one owner (R6).
	Owner string
	// Status keeps tasks with this status: active, paused or deleted.
	Status string
	// DueBefore keeps active tasks whose next_run is at or before it.
	DueBefore time.Time
	// Limit is the page size. Default 100, at most 1000.
	Limit int
	// Cursor continues from the page that returned it; empty starts.
	Cursor string
}

// Page is one page of a query; Next is the cursor of the next page, empty
// on the last page.
type Page struct {
	Tasks []Task `json:"tasks"`
	Next  string `json:"next,omitempty"`
}

// Validate names the first invalid field.
func (q Query) Validate() error {
	switch q.Status {
	case "", StatusActive, StatusPaused, StatusDeleted:
	default:
		return fmt.Errorf("%w: status %q is not active, paused or deleted", ErrBadQuery, q.Status)
	}
	if q.Limit < 0 || q.Limit > MaxLimit {
		return fmt.Errorf("%w: limit %d outside 1..%d", ErrBadQuery, q.Limit, MaxLimit)
	}
	return nil
}

// index returns the key range the query scans: [lower, upper).
func (q Query) index() (lower, upper []byte) {
	switch {
	case q.Owner != "":
		lower = append(append([]byte{keyOwner}, q.Owner...), 0)
		return lower, prefixEnd(lower)
	case !q.DueBefore.IsZero():
		return []byte{keyDue}, append([]byte{keyDue}, timeKey(q.DueBefore.Add(time.Nanosecond))...)
	case q.Status != "":
		lower = append(append([]byte{keyStatus}, q.Status...), 0)
		return lower, prefixEnd(lower)
	default:
		return []byte{keyTask}, []byte{keyTask + 1}
	}
}

func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

func (q Query) keep(t *Task) bool {
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

// Query returns one page of the rows q selects.
func (v *View) Query(q Query) (Page, error) {
	if err := q.Validate(); err != nil {
		return Page{}, err
	}
	if err := v.open(); err != nil {
		return Page{}, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	lower, upper := q.index()
	if q.Cursor != "" {
		c, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil || len(c) < 17 || bytes.Compare(c, lower) < 0 || bytes.Compare(c, upper) >= 0 {
			return Page{}, fmt.Errorf("%w: %q does not belong to this query", ErrBadCursor, q.Cursor)
		}
		lower = append(c, 0) // the key right after the cursor
	}
	snap := v.db.NewSnapshot()
	defer snap.Close()
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return Page{}, fmt.Errorf("crontasks: query: %w", err)
	}
	defer it.Close()
	var page Page
	var lastKey []byte
	for ok := it.First(); ok; ok = it.Next() {
		key := it.Key()
		if len(key) < 17 {
			return Page{}, fmt.Errorf("%w: index key %q", ErrCorrupt, key)
		}
		var t Task
		if key[0] == keyTask {
			if err := json.Unmarshal(it.Value(), &t); err != nil {
				return Page{}, fmt.Errorf("%w: task row %x: %v", ErrCorrupt, key[1:], err)
			}
		} else {
			id, _ := uuid.FromBytes(key[len(key)-16:])
			p, err := getIn(snap, id)
			if err != nil {
				return Page{}, err
			}
			if p == nil {
				return Page{}, fmt.Errorf("%w: index key %q names a missing task %s", ErrCorrupt, key, id)
			}
			t = *p
		}
		if !q.keep(&t) {
			continue
		}
		if len(page.Tasks) == limit {
			page.Next = base64.RawURLEncoding.EncodeToString(lastKey)
			break
		}
		page.Tasks = append(page.Tasks, t)
		lastKey = bytes.Clone(key)
	}
	if err := it.Error(); err != nil {
		return Page{}, fmt.Errorf("crontasks: query: %w", err)
	}
	return page, nil
}

func getIn(r pebble.Reader, id uuid.UUID) (*Task, error) {
	val, closer, err := r.Get(taskKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("crontasks: read task %s: %w", id, err)
	}
	defer closer.Close()
	var t Task
	if err := json.Unmarshal(val, &t); err != nil {
		return nil, fmt.Errorf("%w: task %s: %v", ErrCorrupt, id, err)
	}
	return &t, nil
}

// All returns every row, by id (all pages of an empty query).
func (v *View) All() ([]Task, error) {
	var out []Task
	q := Query{Limit: MaxLimit}
	for {
		p, err := v.Query(q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Tasks...)
		if p.Next == "" {
			return out, nil
		}
		q.Cursor = p.Next
	}
}
