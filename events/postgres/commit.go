package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Append implements events.Store: the append joins the committer's next
// group; it returns once that group's transaction has committed, or failed.
func (s *Store) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	req := &appendReq{done: make(chan struct{}, 1)}
	if err := s.handOver(ctx, req, stream, expected, evs); err != nil {
		return events.AppendResult{}, err
	}
	// Once queued, the append is decided by the committer: wait for the
	// outcome even if ctx ends, so a durable append is never reported failed.
	<-req.done
	return req.result, req.err
}

// AppendAsync implements events.AsyncAppender: queued as Append queues, and
// done is called by the committer after the group's commit. An append
// refused before it is queued gets its error through done before
// AppendAsync returns.
func (s *Store) AppendAsync(ctx context.Context, stream string, expected events.ExpectedVersion, evs []events.Proposed, done func(events.AppendResult, error)) {
	req := &appendReq{cb: done}
	if err := s.handOver(ctx, req, stream, expected, evs); err != nil {
		done(events.AppendResult{}, err)
	}
}

func (s *Store) handOver(ctx context.Context, req *appendReq, stream string, expected events.ExpectedVersion, evs []events.Proposed) error {
	if err := events.ValidateStream(stream); err != nil {
		return err
	}
	if len(evs) == 0 {
		return events.ErrNoEvents
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	req.stream, req.expected, req.evs = stream, expected, evs
	// Queued under mu: Close cannot mark the store closed meanwhile, so the
	// committer, which drains the queue before it ends, sees this append.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return events.ErrClosed
	}
	s.intake.put(req)
	return nil
}

func (s *Store) commitLoop() {
	defer close(s.stopped)
	for {
		batch := s.intake.take(s.opts.MaxBatchEvents)
		if len(batch) == 0 {
			select {
			case <-s.intake.wake:
				continue
			case <-s.done:
			}
			// Closed: decide what was queued before Close, then stop.
			if batch = s.intake.take(s.opts.MaxBatchEvents); len(batch) == 0 {
				return
			}
		}
		s.commit(batch)
	}
}

// commit decides one group in one transaction and answers its appends.
func (s *Store) commit(batch []*appendReq) {
	var last uint64
	var err error
	unknown := false   // an attempt broke after its writes were sent
	headFirst := false // read the versions under the head row
	for attempt := 0; ; attempt++ {
		last, err = s.commitTx(batch, headFirst)
		if err == nil {
			break
		}
		unknown = unknown || brokenDuringWrites(err)
		// Each pooled connection may be found broken once (the pool drops
		// it): as many attempts as the pool holds connections.
		if collided(err) {
			// Another transaction appended to one of the group's streams
			// between the read (or the remembering) of its version and the
			// insert (another process, or a held group): decide again,
			// under the head row, where it cannot happen.
			headFirst = true
			s.versions.forget(streamsOf(batch))
		}
		if unavailable(err) {
			// A server lost or replaced: remember nothing from before.
			s.versions.clear()
		}
		again := ((retryable(err) || collided(err)) && attempt < 2) ||
			((brokenBeforeWrites(err) || (brokenDuringWrites(err) && identified(batch))) && attempt < s.opts.MaxConns)
		if !again {
			break
		}
		// A deadlock or serialisation failure decided nothing, nor did a
		// connection that broke before the writes were sent: again. One
		// that broke after may have committed: again too when every event
		// has an ID, so that retried recognises what landed (the appends'
		// callers get its result, as if the answer had come).
		s.log.Warn("postgres append group retried", "error", err, "attempt", attempt+1)
		for _, r := range batch {
			r.result, r.err = events.AppendResult{}, nil
		}
	}
	switch {
	case err != nil && unknown && identified(batch) && unavailable(err):
		// The group may have committed and the server cannot say now:
		// answering "failed" would leave the callers unsure of their
		// streams. Held until the server answers (resolve.go).
		s.failed(0)
		s.hold(batch, err)
		return
	case err != nil:
		// ErrUnavailable matches events.ErrUnreachable: the API answers
		// 503 naming it, as for any store that cannot append.
		err = fmt.Errorf("postgres: append: %w", classify(err))
		if errors.Is(err, ErrUnavailable) {
			// WriteStatus says so once the prober has seen it, and the
			// prober logs it once: not an ERROR per group.
			s.failed(len(batch))
			s.log.Warn("postgres append group failed", "error", err, "appends", len(batch))
		} else {
			s.suspect()
			s.log.Error("postgres append group failed", "error", err, "appends", len(batch))
		}
	default:
		s.answered()
		if last > 0 {
			s.advance(last)
		}
	}
	for _, r := range batch {
		if err != nil {
			r.result, r.err = events.AppendResult{}, err
		}
		r.answer()
	}
}

// loseCommitAnswer, set by tests only, is called after a group committed:
// an error it returns stands for the commit's answer lost with its
// connection.
var loseCommitAnswer func() error

// afterVersionsRead, set by tests only, is called after a group read its
// streams' versions, before it decides and writes.
var afterVersionsRead func()

// notWritten marks an error of a group's transaction met before its
// writes were sent: the transaction decided nothing.
type notWritten struct{ err error }

func (e *notWritten) Error() string { return e.err.Error() }
func (e *notWritten) Unwrap() error { return e.err }

// brokenDuringWrites says whether err is a broken connection met after
// the group's writes were sent: the outcome is unknown.
func brokenDuringWrites(err error) bool {
	var nw *notWritten
	return !errors.As(err, &nw) && unavailable(err)
}

func streamsOf(batch []*appendReq) []string {
	out := make([]string, len(batch))
	for i, r := range batch {
		out[i] = r.stream
	}
	return out
}

// identified says whether every event of the group has an ID: then a retry
// of the group recognises the appends that landed.
func identified(batch []*appendReq) bool {
	for _, r := range batch {
		for _, e := range r.evs {
			if e.ID == uuid.Nil {
				return false
			}
		}
	}
	return true
}

// brokenBeforeWrites says whether err is a pooled connection found broken
// (killed by pg_terminate_backend, or by a restart the pool has not seen
// yet) before the group's writes were sent: worth one more attempt on
// another connection. A failure to connect is not: the server is away.
func brokenBeforeWrites(err error) bool {
	var nw *notWritten
	return errors.As(err, &nw) && brokenConn(err)
}

// eventsStreamVersionKey is the unique constraint on cronactor_events'
// (stream, version), named by PostgreSQL when migration 1 created it.
const eventsStreamVersionKey = "cronactor_events_stream_version_key"

// collided says whether err is a group's insert refused because one of its
// events' (stream, version) was taken since the group read the versions:
// the transaction decided nothing.
func collided(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && ((pgErr.Code == "23505" && pgErr.ConstraintName == eventsStreamVersionKey) ||
		pgErr.Code == versionsMovedCode)
}

// versionsMovedCode is the SQLSTATE of cronactor_check_versions: a
// remembered version was not the stream's.
const versionsMovedCode = "CA001"

// streamVersionsSQL reads the last version of each stream of $1 (NULL: no
// events) from cronactor_events' (stream, version) index: one backward
// index probe per stream. Retention never deletes a stream's last event,
// so the maximum is the stream's version.
const streamVersionsSQL = `SELECT u.stream, (SELECT max(e.version) FROM cronactor_events e WHERE e.stream = u.stream)
	FROM unnest($1::text[]) AS u(stream)`

// readStreamVersions reads the answers of a batch queued as BEGIN (or
// SAVEPOINT) when began, the head row's lock when headFirst, then
// streamVersionsSQL, and closes it.
func readStreamVersions(br pgx.BatchResults, began, headFirst bool) (map[string]*streamState, error) {
	defer br.Close()
	if began {
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	if headFirst {
		var pos int64
		if err := br.QueryRow().Scan(&pos); err != nil {
			return nil, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	heads := make(map[string]*streamState)
	for rows.Next() {
		var name string
		var v *int64
		if err := rows.Scan(&name, &v); err != nil {
			return nil, err
		}
		h := &streamState{version: -1}
		if v != nil {
			h.version = *v
		}
		heads[name] = h
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return heads, br.Close()
}

func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// streamState is a stream's last version during a group (-1: no events).
type streamState struct{ version int64 }

// commitTx runs the group's transaction; it sets each append's result or
// its own error (a conflict), and returns the last position written (0:
// none) or the error that failed the whole group.
//
// The streams' versions are read without a lock, and the head row, which
// every appender holds while it inserts, is taken only for the insert and
// the commit. An append of another transaction to one of the group's
// streams in between makes the insert collide on (stream, version)
// (collided): nothing is decided, and the group is decided again with
// headFirst, which takes the head row before reading the versions.
func (s *Store) commitTx(batch []*appendReq, headFirst bool) (_ uint64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.OpTimeout)
	defer cancel()
	writing := false
	defer func() {
		if err != nil && !writing {
			err = &notWritten{err}
		}
	}()
	// BEGIN goes with the versions' read, COMMIT with the writes: two
	// round trips for a group that conflicts nowhere. A connection given
	// back in the middle of a transaction (any error below) is closed by
	// the pool.
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	tx := conn.Conn()

	names := make([]string, 0, len(batch))
	for _, r := range batch {
		names = append(names, r.stream)
	}
	slices.Sort(names)
	names = slices.Compact(names)

	// The versions: remembered ones (checked below, with the writes), the
	// others read.
	base := make(map[string]int64, len(names))
	remembered := make(map[string]bool, len(names))
	var missing []string
	for _, n := range names {
		if v, ok := s.versions.get(n); ok && !headFirst {
			base[n], remembered[n] = v, true
		} else {
			missing = append(missing, n)
		}
	}
	inTx := false
	read := func(streams []string) error {
		b := &pgx.Batch{}
		if !inTx {
			b.Queue(`BEGIN`)
			if headFirst {
				// Every appender inserts only while it holds the head row:
				// once it is ours, the versions read next are final.
				b.Queue(`SELECT position FROM cronactor_head WHERE id = 1 FOR UPDATE`)
			}
		}
		b.Queue(streamVersionsSQL, streams)
		heads, err := readStreamVersions(tx.SendBatch(ctx, b), !inTx, !inTx && headFirst)
		inTx = true
		if err != nil {
			return err
		}
		for n, h := range heads {
			base[n] = h.version
			delete(remembered, n)
		}
		return nil
	}
	if len(missing) > 0 {
		if err := read(missing); err != nil {
			return 0, err
		}
		if afterVersionsRead != nil {
			afterVersionsRead()
		}
	}

	// Decide each append against its stream as the group leaves it; an
	// append refused against a remembered version is decided again, with
	// the whole group, against its stream's version read.
	var w writeSet
	var accepted []*appendReq
	for {
		heads := make(map[string]*streamState, len(base))
		for n, v := range base {
			heads[n] = &streamState{version: v}
		}
		w, accepted = writeSet{}, accepted[:0]
		var stale []string
		for _, r := range batch {
			r.result, r.err = events.AppendResult{}, nil
			h := heads[r.stream]
			var cur uint64
			exists := h.version >= 0
			if exists {
				cur = uint64(h.version)
			}
			if r.expected.IsAny() || !r.expected.Allows(cur, exists) {
				res, ok, err := s.retried(ctx, tx, r, cur, exists)
				if err != nil {
					return 0, err
				}
				if ok {
					r.result = res
					continue
				}
				if !r.expected.IsAny() {
					if remembered[r.stream] {
						stale = append(stale, r.stream)
					}
					r.err = &events.VersionConflictError{Stream: r.stream, Expected: r.expected, Actual: cur, ActualExists: exists}
					continue
				}
			}
			first := h.version + 1
			w.add(r, first)
			h.version = first + int64(len(r.evs)) - 1
			accepted = append(accepted, r)
		}
		if len(stale) == 0 {
			break
		}
		s.versions.forget(stale)
		slices.Sort(stale)
		if err := read(slices.Compact(stale)); err != nil {
			return 0, err
		}
	}
	if len(accepted) == 0 {
		if inTx {
			_, err := tx.Exec(ctx, "COMMIT")
			return 0, err
		}
		return 0, nil
	}
	var checkNames []string
	var checkVersions []int64
	for _, n := range names {
		if remembered[n] {
			checkNames = append(checkNames, n)
			checkVersions = append(checkVersions, base[n])
		}
	}

	// Take the positions last, so the head row, which serialises every
	// appending transaction, is held only for the write and the commit.
	total := int64(len(w.stream))
	wb := &pgx.Batch{}
	if !inTx {
		wb.Queue(`BEGIN`)
	}
	wb.Queue(`UPDATE cronactor_head SET position = position + $1 WHERE id = 1 RETURNING position`, total)
	if len(checkNames) > 0 {
		// Under the head row: no version can move before the commit.
		wb.Queue(`SELECT cronactor_check_versions($1::text[], $2::bigint[])`, checkNames, checkVersions)
	}
	wb.Queue(`INSERT INTO cronactor_events (position, stream, version, id, type, schema, at, at_nanos, causation_id, correlation_id, data)
		SELECT h.position - $1 + e.ord, e.stream, e.version, e.id, e.type, e.schema, e.at, e.at_nanos, e.causation_id, e.correlation_id, e.data
		FROM cronactor_head h,
			unnest($2::text[], $3::bigint[], $4::uuid[], $5::text[], $6::integer[], $7::timestamptz[], $8::smallint[], $9::uuid[], $10::uuid[], $11::bytea[])
			WITH ORDINALITY AS e(stream, version, id, type, schema, at, at_nanos, causation_id, correlation_id, data, ord)
		WHERE h.id = 1`,
		total, w.stream, w.version, w.id, w.typ, w.schema, w.at, w.atNanos, w.causation, w.correlation, w.data)
	wb.Queue(`SELECT pg_notify($1, (SELECT position FROM cronactor_head WHERE id = 1)::text)`, notifyChannel)
	wb.Queue(`COMMIT`)
	writing = true
	br := tx.SendBatch(ctx, wb)
	if !inTx {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return 0, err
		}
	}
	var headPos int64
	if err := br.QueryRow().Scan(&headPos); err != nil {
		br.Close()
		return 0, err
	}
	if len(checkNames) > 0 {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return 0, err
		}
	}
	for range 2 {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return 0, err
		}
	}
	if _, err := br.Exec(); err != nil {
		br.Close()
		return 0, fmt.Errorf("commit (outcome unknown: a retry with the same event IDs is recognised): %w", err)
	}
	if err := br.Close(); err != nil {
		return 0, fmt.Errorf("commit (outcome unknown: a retry with the same event IDs is recognised): %w", err)
	}
	if loseCommitAnswer != nil {
		if err := loseCommitAnswer(); err != nil {
			return 0, fmt.Errorf("commit (outcome unknown: a retry with the same event IDs is recognised): %w", err)
		}
	}
	for n, v := range base {
		if !remembered[n] {
			s.versions.put(n, v)
		}
	}
	for i, r := range accepted {
		s.versions.put(r.stream, int64(w.version[w.ends[i]-1]))
	}
	first := uint64(headPos) - uint64(total)
	for i, r := range accepted {
		end := first + uint64(w.ends[i])
		r.result = events.AppendResult{Version: uint64(w.version[w.ends[i]-1]), Position: events.Position{Commit: end, Prepare: end}}
	}
	return uint64(headPos), nil
}

// writeSet is the group's accepted events as columns.
//
// The IDs are [16]byte: pgx writes a uuid.UUID, a driver.Valuer, through
// its text form (formatted, then parsed again), which took 18% of the
// process's CPU in a Postgres wave (docs/performance.md, "Schema 2");
// [16]byte it copies as the binary uuid.
type writeSet struct {
	stream      []string
	version     []int64
	id          [][16]byte
	typ         []string
	schema      []int32
	at          []time.Time
	atNanos     []int16
	causation   [][16]byte
	correlation [][16]byte
	data        [][]byte
	ends        []int // per accepted append: index after its last event
}

func (w *writeSet) add(r *appendReq, first int64) {
	for i, e := range r.evs {
		id := e.ID
		if id == uuid.Nil {
			id = uuid.New()
		}
		at, nanos := splitTime(e.At)
		data := e.Data
		if data == nil {
			data = []byte{}
		}
		w.stream = append(w.stream, r.stream)
		w.version = append(w.version, first+int64(i))
		w.id = append(w.id, id)
		w.typ = append(w.typ, e.Type)
		w.schema = append(w.schema, int32(e.Schema))
		w.at = append(w.at, at)
		w.atNanos = append(w.atNanos, nanos)
		w.causation = append(w.causation, e.CausationID)
		w.correlation = append(w.correlation, e.CorrelationID)
		w.data = append(w.data, data)
	}
	w.ends = append(w.ends, len(w.stream))
}

// splitTime splits t into the microseconds timestamptz keeps and the
// nanoseconds beyond them.
func splitTime(t time.Time) (time.Time, int16) {
	ns := t.Nanosecond() % 1000
	return t.Add(-time.Duration(ns)), int16(ns)
}

func joinTime(t time.Time, nanos int16) time.Time {
	return t.Add(time.Duration(nanos)).UTC()
}

// retried recognises a repeated append: the events stored right after the
// expected version (for AnyVersion: the stream's last events) carry the
// same IDs. It reads inside the group's transaction; what it finds is
// committed, so it holds whether or not the head row was taken yet.
func (s *Store) retried(ctx context.Context, tx *pgx.Conn, r *appendReq, cur uint64, exists bool) (events.AppendResult, bool, error) {
	if !exists {
		return events.AppendResult{}, false, nil
	}
	n := uint64(len(r.evs))
	var from uint64
	if v, ok := r.expected.Exact(); ok {
		from = v + 1
	} else if r.expected.IsAny() {
		if cur+1 < n {
			return events.AppendResult{}, false, nil
		}
		from = cur + 1 - n
	}
	for _, e := range r.evs {
		if e.ID == uuid.Nil {
			return events.AppendResult{}, false, nil
		}
	}
	if from+n-1 > cur {
		return events.AppendResult{}, false, nil
	}
	rows, err := tx.Query(ctx, `SELECT id, version, position FROM cronactor_events
		WHERE stream = $1 AND version >= $2 AND version < $3 ORDER BY version`, r.stream, int64(from), int64(from+n))
	if err != nil {
		return events.AppendResult{}, false, err
	}
	defer rows.Close()
	i := 0
	var version, pos int64
	for rows.Next() {
		var id [16]byte
		if err := rows.Scan(&id, &version, &pos); err != nil {
			return events.AppendResult{}, false, err
		}
		if i >= len(r.evs) || id != r.evs[i].ID {
			rows.Close()
			return events.AppendResult{}, false, rows.Err()
		}
		i++
	}
	if err := rows.Err(); err != nil {
		return events.AppendResult{}, false, err
	}
	if i != len(r.evs) {
		return events.AppendResult{}, false, nil
	}
	p := uint64(pos)
	return events.AppendResult{Version: uint64(version), Position: events.Position{Commit: p, Prepare: p}}, true, nil
}
