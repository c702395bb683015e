package esdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/cronactor/cronactor/events"
)

var _ events.Truncater = (*Store)(nil)

// TruncateBefore implements events.Truncater with EventStoreDB's
// truncate-before: it sets $tb in the stream's metadata (the other
// metadata properties kept as they are), never lowering it, since a lower
// $tb would show removed events again until a scavenge. Stream reads stop
// returning the events below it at once; $all keeps them until the
// server scavenges (docs/decisions/0023-retention.md), and a reader of
// the global log folds the stream's TaskCompacted as its start either
// way.
func (s *Store) TruncateBefore(ctx context.Context, stream string, before uint64) error {
	if err := checkStream(stream); err != nil {
		return err
	}
	cctx, done, err := s.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	last, found, err := s.lastEvent(ctx, cctx, stream)
	if err != nil {
		return fmt.Errorf("esdb: truncate %q: %w", stream, err)
	}
	if !found {
		return fmt.Errorf("esdb: truncate %q: %w", stream, events.ErrStreamNotFound)
	}
	if before > last.Version {
		return fmt.Errorf("esdb: truncate %q before %d: %w", stream, before, events.ErrTruncateRange)
	}
	meta, err := retry(s, ctx, cctx, "read stream metadata", func(ctx context.Context, cl *esdb.Client) (map[string]any, error) {
		return s.streamMetadata(ctx, cl, stream)
	})
	if err != nil {
		return fmt.Errorf("esdb: truncate %q: %w", stream, err)
	}
	if tb, ok := meta["$tb"].(float64); ok && tb >= float64(before) {
		return nil // removed already
	}
	meta["$tb"] = before
	data, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("esdb: truncate %q: %w", stream, err)
	}
	_, err = retry(s, ctx, cctx, "set stream metadata", func(ctx context.Context, cl *esdb.Client) (*esdb.WriteResult, error) {
		return cl.AppendToStream(ctx, "$$"+s.opts.Namespace+stream, esdb.AppendToStreamOptions{},
			esdb.EventData{ContentType: esdb.ContentTypeJson, EventType: "$metadata", Data: data})
	})
	if err != nil {
		return fmt.Errorf("esdb: truncate %q: %w", stream, err)
	}
	return nil
}

// streamMetadata reads the stream's latest metadata as a JSON object
// (empty when it has none).
func (s *Store) streamMetadata(ctx context.Context, cl *esdb.Client, stream string) (map[string]any, error) {
	rs, err := cl.ReadStream(ctx, "$$"+s.opts.Namespace+stream, esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.End{}}, 1)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	ev, err := rs.Recv()
	switch {
	case errors.Is(err, io.EOF), isCode(err, esdb.ErrorCodeResourceNotFound):
		return map[string]any{}, nil
	case err != nil:
		return nil, err
	}
	meta := map[string]any{}
	if err := json.Unmarshal(ev.OriginalEvent().Data, &meta); err != nil || meta == nil {
		return nil, fmt.Errorf("%w: stream metadata of %q: %v", ErrMetadata, stream, err)
	}
	return meta, nil
}
