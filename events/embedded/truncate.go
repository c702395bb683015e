package embedded

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"
	"github.com/cronactor/cronactor/events"
)

var _ events.Truncater = (*Store)(nil)

// truncateChunk bounds the events one batch of TruncateBefore removes.
const truncateChunk = 4096

// TruncateBefore implements events.Truncater. The stream's index entries
// below before go with a range delete, and the records they point at are
// deleted from the global log with them, in the same batch (a chunk of at
// most truncateChunk events at a time, each batch synced): the global log
// keeps no removed event, and ReadAll and Subscribe skip the positions it
// no longer holds (docs/decisions/0023-retention.md). Only durable events
// are considered, and the stream's last durable event is never removed.
func (s *Store) TruncateBefore(ctx context.Context, stream string, before uint64) error {
	if err := events.ValidateStream(stream); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.use(); err != nil {
		return err
	}
	defer s.release()
	if err := s.brokenErr(); err != nil {
		return err // a full disk, say: the committer reopens the database
	}
	head := s.Head().Commit
	prefix := streamPrefix(stream)
	// The stream must hold a durable event at before or later.
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return s.dbErr(fmt.Sprintf("truncate stream %q", stream), err)
	}
	exists, keeps := false, false
	for ok := it.SeekGE(streamKey(stream, before)); ok; ok = it.Next() {
		if binary.BigEndian.Uint64(it.Value()) <= head {
			keeps = true
			break
		}
	}
	if !keeps {
		exists = it.First() && binary.BigEndian.Uint64(it.Value()) <= head
	}
	if err := it.Error(); err != nil {
		it.Close()
		return s.dbErr(fmt.Sprintf("truncate stream %q", stream), err)
	}
	it.Close()
	if !keeps {
		if !exists {
			return fmt.Errorf("%w: %q", events.ErrStreamNotFound, stream)
		}
		return fmt.Errorf("%w: %q before version %d", events.ErrTruncateRange, stream, before)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := s.truncateChunk(stream, before)
		if err != nil || n < truncateChunk {
			return err
		}
	}
}

// truncateChunk removes up to truncateChunk of the first events of stream
// below version before, in one synced batch, and returns how many.
func (s *Store) truncateChunk(stream string, before uint64) (n int, err error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: streamKey(stream, 0), UpperBound: streamKey(stream, before)})
	if err != nil {
		return 0, s.dbErr(fmt.Sprintf("truncate stream %q", stream), err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	var last []byte
	for ok := it.First(); ok && n < truncateChunk; ok = it.Next() {
		v := it.Value()
		if len(v) != 8 {
			it.Close()
			return 0, fmt.Errorf("%w: stream index entry of %q in %s", ErrCorrupt, stream, s.dbDir)
		}
		_ = b.Delete(globalKey(binary.BigEndian.Uint64(v)), nil)
		last = append(last[:0], it.Key()...)
		n++
	}
	if err := it.Error(); err != nil {
		it.Close()
		return 0, s.dbErr(fmt.Sprintf("truncate stream %q", stream), err)
	}
	it.Close()
	if n == 0 {
		return 0, nil
	}
	// The index entries removed: from version 0 through the last one read.
	_ = b.DeleteRange(streamKey(stream, 0), append(last, 0), nil)
	if err := s.applySync(b); err != nil {
		return 0, s.fail(fmt.Errorf("truncate stream %q: %w", stream, err))
	}
	return n, nil
}

// applySync writes b durably, turning a panic of Pebble's into an error as
// apply does.
func (s *Store) applySync(b *pebble.Batch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			perr, ok := r.(error)
			if !ok {
				perr = fmt.Errorf("%v", r)
			}
			s.stuck.Store(true)
			err = fmt.Errorf("pebble stopped (restart the process to append again): %w", perr)
		}
	}()
	return s.db.Apply(b, pebble.Sync)
}

// errTruncated: a record read through the stream's index was removed by a
// truncation meanwhile (readStream skips it).
var errTruncated = errors.New("embedded: removed by a truncation")
