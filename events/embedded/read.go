package embedded

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/cronactor/cronactor/events"
)

func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// ReadStream implements events.Store. It shows durable events only:
// Pebble makes a batch visible before its WAL sync, so reads stop at the
// durable head.
func (s *Store) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if err := events.ValidateStream(stream); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.use(); err != nil {
		return nil, err
	}
	defer s.release()
	head := s.Head().Commit
	out, err := s.readStream(stream, from, limit, head)
	if err != nil || len(out) > 0 {
		return out, err
	}
	// Nothing from "from" on: tell an empty read past the end from a
	// missing stream. The stream's first entry is version 0, or a later
	// one once its start was truncated (TruncateBefore).
	prefix := streamPrefix(stream)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, s.dbErr(fmt.Sprintf("read stream %q", stream), err)
	}
	defer it.Close()
	if !it.First() {
		if err := it.Error(); err != nil {
			return nil, s.dbErr(fmt.Sprintf("read stream %q", stream), err)
		}
		return nil, fmt.Errorf("%w: %q", events.ErrStreamNotFound, stream)
	}
	v := it.Value()
	if len(v) != 8 {
		return nil, fmt.Errorf("%w: stream index entry of %q in %s", ErrCorrupt, stream, s.dbDir)
	}
	if binary.BigEndian.Uint64(v) > head {
		return nil, fmt.Errorf("%w: %q", events.ErrStreamNotFound, stream)
	}
	return nil, nil
}

// readStream reads the events of stream from version from on, stopping at
// the first one positioned after head.
func (s *Store) readStream(stream string, from uint64, limit int, head uint64) ([]events.Recorded, error) {
	prefix := streamPrefix(stream)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: streamKey(stream, from), UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, s.dbErr(fmt.Sprintf("read stream %q", stream), err)
	}
	defer it.Close()
	var out []events.Recorded
	for ok := it.First(); ok && (limit <= 0 || len(out) < limit); ok = it.Next() {
		v := it.Value()
		if len(v) != 8 {
			return out, fmt.Errorf("%w: stream index entry of %q in %s", ErrCorrupt, stream, s.dbDir)
		}
		pos := binary.BigEndian.Uint64(v)
		if pos > head {
			break
		}
		rec, err := s.get(pos)
		if errors.Is(err, errTruncated) && s.indexGone(it.Key()) {
			// Removed by TruncateBefore since the index was read: so is
			// every event read before it (a truncation removes a
			// stream's start), and the read goes on as if it had begun
			// after the truncation.
			out = out[:0]
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
	if err := it.Error(); err != nil {
		return out, s.dbErr(fmt.Sprintf("read stream %q", stream), err)
	}
	return out, nil
}

func (s *Store) get(pos uint64) (events.Recorded, error) {
	v, closer, err := s.db.Get(globalKey(pos))
	if errors.Is(err, pebble.ErrNotFound) {
		return events.Recorded{}, fmt.Errorf("%w: global position %d is indexed but missing in %s (%w)", ErrCorrupt, pos, s.dbDir, errTruncated)
	}
	if err != nil {
		return events.Recorded{}, s.dbErr(fmt.Sprintf("read global position %d", pos), err)
	}
	defer closer.Close()
	rec, err := decodeRecord(pos, v)
	if err != nil {
		return rec, fmt.Errorf("%w: record at global position %d in %s: %v", ErrCorrupt, pos, s.dbDir, err)
	}
	return rec, nil
}

// indexGone reports whether the stream index entry at key is gone: a
// record missing behind an entry read a moment ago was truncated, not
// lost, when the entry went with it.
func (s *Store) indexGone(key []byte) bool {
	_, closer, err := s.db.Get(key)
	if err == nil {
		closer.Close()
	}
	return errors.Is(err, pebble.ErrNotFound)
}

// ReadAll implements events.Store.
func (s *Store) ReadAll(ctx context.Context, after events.Position, limit int) ([]events.Recorded, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.use(); err != nil {
		return nil, err
	}
	defer s.release()
	s.mu.RLock()
	head := s.head
	s.mu.RUnlock()
	return s.readAll(nil, after.Commit, head, limit)
}

// readAll appends to out[:0] the records after position after up to head,
// at most limit of them (limit ≤ 0: all); out nil makes a new page.
func (s *Store) readAll(out []events.Recorded, after, head uint64, limit int) ([]events.Recorded, error) {
	if after >= head {
		return out[:0], nil
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: globalKey(after + 1), UpperBound: globalKey(head + 1)})
	if err != nil {
		return nil, s.dbErr("read global log", err)
	}
	defer it.Close()
	// Positions are dense but where retention removed events
	// (TruncateBefore): the page holds at most head - after records, or
	// limit.
	n := head - after
	if limit > 0 && uint64(limit) < n {
		n = uint64(limit)
	}
	if out == nil {
		out = make([]events.Recorded, 0, min(n, maxPagePrealloc))
	}
	out = out[:0]
	for ok := it.First(); ok && (limit <= 0 || len(out) < limit); ok = it.Next() {
		pos := binary.BigEndian.Uint64(it.Key()[1:])
		rec, err := decodeRecord(pos, it.Value())
		if err != nil {
			return out, fmt.Errorf("%w: record at global position %d in %s: %v", ErrCorrupt, pos, s.dbDir, err)
		}
		out = append(out, rec)
	}
	if err := it.Error(); err != nil {
		return out, s.dbErr("read global log", err)
	}
	return out, nil
}

// Subscribe implements events.Store.
func (s *Store) Subscribe(ctx context.Context, after events.Position, handle func(events.Recorded) error) error {
	s.subscribers.Add(1)
	defer s.subscribers.Add(-1)
	pos := after.Commit
	// One page, reused: handle gets each record by value, and a record's
	// data is its own copy (decodeRecord), so nothing handle keeps points
	// into the page. A page a wave's subscriber read anew each time it
	// caught up was 5% of the wave's allocated bytes.
	var page []events.Recorded
	var refs []tailChunk
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.mu.RLock()
		head, wake := s.head, s.notify
		s.mu.RUnlock()
		if pos >= head {
			select {
			case <-wake:
				continue
			case <-ctx.Done():
				return ctx.Err()
			case <-s.done:
				return events.ErrClosed
			}
		}
		if err := s.use(); err != nil {
			return err
		}
		var err error
		var ok bool
		page, refs, ok, err = s.readTail(page, refs, pos, head, subscribePage)
		if !ok && err == nil {
			page, err = s.readAll(page, pos, head, subscribePage)
		}
		s.release()
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := handle(r); err != nil {
				return fmt.Errorf("embedded: subscriber: %w", err)
			}
			pos = r.Position.Commit
		}
		clear(page) // an idle subscriber keeps no record's data
	}
}

// Head returns the position of the last durable event.
func (s *Store) Head() events.Position {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return events.Position{Commit: s.head, Prepare: s.head}
}

// dbErr wraps an error from Pebble. Corruption becomes ErrCorrupt naming
// the damaged file where Pebble's message says which one.
func (s *Store) dbErr(op string, err error) error {
	if pebble.IsCorruptionError(err) {
		return fmt.Errorf("%w: %s: %s: %v", ErrCorrupt, op, corruptFile(s.fs, s.dbDir, err), err)
	}
	return fmt.Errorf("embedded: %s: %w", op, err)
}

// tableNumber finds the file number in Pebble's corruption messages
// ("invalid table 000014 (checksum mismatch …)", "… in 000007.sst …").
var tableNumber = regexp.MustCompile(`(?:table |\b)(\d{6,})(\.sst|\.log)?\b`)

// corruptFile names the damaged file: the path of the table or log Pebble
// mentions, else Pebble's directory.
func corruptFile(fs vfs.FS, dbDir string, err error) string {
	m := tableNumber.FindStringSubmatch(err.Error())
	if m == nil {
		return "in " + dbDir
	}
	ext := m[2]
	if ext == "" {
		ext = ".sst"
	}
	return "in file " + fs.PathJoin(dbDir, m[1]+ext)
}

// StreamVersion is the version of stream's last event (events.StreamVersioner):
// one seek to the end of the stream's index, not a read of the stream.
func (s *Store) StreamVersion(ctx context.Context, stream string) (uint64, error) {
	if err := events.ValidateStream(stream); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := s.use(); err != nil {
		return 0, err
	}
	defer s.release()
	head := s.Head().Commit
	prefix := streamPrefix(stream)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return 0, s.dbErr(fmt.Sprintf("read stream %q", stream), err)
	}
	defer it.Close()
	// An index entry positioned after head belongs to an append not yet
	// visible: readers do not see it, so neither does this.
	for ok := it.Last(); ok; ok = it.Prev() {
		k, v := it.Key(), it.Value()
		if len(v) != 8 || len(k) != len(prefix)+8 {
			return 0, fmt.Errorf("%w: stream index entry of %q in %s", ErrCorrupt, stream, s.dbDir)
		}
		if binary.BigEndian.Uint64(v) <= head {
			return binary.BigEndian.Uint64(k[len(prefix):]), nil
		}
	}
	if err := it.Error(); err != nil {
		return 0, s.dbErr(fmt.Sprintf("read stream %q", stream), err)
	}
	return 0, fmt.Errorf("%w: %q", events.ErrStreamNotFound, stream)
}
