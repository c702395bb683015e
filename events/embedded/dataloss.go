package embedded

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// dataLoss is the report an open with Options.AcceptDataLoss writes when it
// cuts a damaged write-ahead log: DATA_LOSS-<time>.json in the data
// directory, beside a byte-for-byte copy of the log as it was found.
type dataLoss struct {
	At       time.Time `json:"at"`
	Log      string    `json:"log"`
	Copy     string    `json:"copy"`
	Size     int64     `json:"size"`
	CutAt    int64     `json:"cut_at"`
	BytesCut int64     `json:"bytes_cut"`
	Reason   string    `json:"reason"`
	// ValidRecordsCut counts the valid log records (Pebble batches) found
	// after the damage: they are dropped with it.
	ValidRecordsCut int `json:"valid_records_cut"`
	// LostFrom and LostTo are the lowest and highest global positions the
	// events of those records carried, as far as they could be read. Every
	// position after HeadAfter up to LostTo is lost (the damaged records
	// themselves cannot be read), and new appends reuse positions after
	// HeadAfter.
	LostFrom  uint64 `json:"lost_from,omitempty"`
	LostTo    uint64 `json:"lost_to,omitempty"`
	HeadAfter uint64 `json:"head_after"`
	// CleanHead is the head a clean shutdown recorded, when there was one.
	CleanHead uint64 `json:"clean_shutdown_head,omitempty"`
}

// reportName is the base name of a report and its log copy.
func reportName(at time.Time) string {
	return "DATA_LOSS-" + at.UTC().Format("20060102T150405.000000000Z")
}

// keepDamagedLog copies the damaged log into the data directory before
// Pebble replays (and later removes) it, and starts the report.
func keepDamagedLog(fs vfs.FS, dir string, d *LogDamageError) (*dataLoss, error) {
	at := time.Now().UTC()
	base := reportName(at)
	cp := fs.PathJoin(dir, base+"-"+fs.PathBase(d.File))
	in, err := fs.Open(d.File)
	if err != nil {
		return nil, fmt.Errorf("embedded: open %s to keep a copy: %w", d.File, err)
	}
	data, err := io.ReadAll(in)
	in.Close()
	if err != nil {
		return nil, fmt.Errorf("embedded: read %s to keep a copy: %w", d.File, err)
	}
	if err := writeSynced(fs, cp, data); err != nil {
		return nil, err
	}
	r := &dataLoss{At: at, Log: d.File, Copy: cp, Size: d.Size, CutAt: d.Offset, BytesCut: d.Size - d.Offset,
		Reason: fmt.Sprint(d.Reason), ValidRecordsCut: d.ValidAfter}
	r.LostFrom, r.LostTo = positionsAfter(data, d)
	return r, nil
}

// positionsAfter reads the global positions of the events in the valid
// records after the damage (0, 0 when none could be read).
func positionsAfter(data []byte, d *LogDamageError) (lo, hi uint64) {
	num := d.num
	for o := d.NextValid; o >= 0 && o+walHeaderSize <= int64(len(data)); {
		rec, next, ok := recordAt(data, o, num)
		if !ok {
			o++
			continue
		}
		o = next
		var b pebble.Batch
		if err := b.SetRepr(rec); err != nil {
			continue
		}
		br := b.Reader()
		for {
			_, k, _, ok, err := br.Next()
			if !ok || err != nil {
				break
			}
			if len(k) == 9 && k[0] == prefixGlobal {
				p := binary.BigEndian.Uint64(k[1:])
				if lo == 0 || p < lo {
					lo = p
				}
				if p > hi {
					hi = p
				}
			}
		}
	}
	return lo, hi
}

// recordAt reassembles the record whose full or first chunk starts at o, and
// returns it with the offset after its last chunk.
func recordAt(data []byte, o int64, num uint32) ([]byte, int64, bool) {
	n, ok := validChunkAt(data, o, num)
	if !ok || (data[o+6] != walFullChunk && data[o+6] != walFirstChunk) {
		return nil, 0, false
	}
	rec := append([]byte(nil), data[o+walHeaderSize:o+walHeaderSize+int64(n)]...)
	typ := data[o+6]
	o += walHeaderSize + int64(n)
	for typ != walFullChunk && typ != walLastChunkType {
		if rem := walBlockSize - o%walBlockSize; rem < walHeaderSize {
			o += rem // the writer pads a block's last few bytes
		}
		n, ok := validChunkAt(data, o, num)
		if !ok || data[o+6] == walFullChunk || data[o+6] == walFirstChunk {
			return nil, 0, false
		}
		rec = append(rec, data[o+walHeaderSize:o+walHeaderSize+int64(n)]...)
		typ = data[o+6]
		o += walHeaderSize + int64(n)
	}
	return rec, o, true
}

// finish completes the report once the store is open, writes it and logs
// what was cut.
func (r *dataLoss) finish(fs vfs.FS, dir string, head, cleanHead uint64, log *slog.Logger) error {
	r.HeadAfter, r.CleanHead = head, cleanHead
	b, _ := json.MarshalIndent(r, "", "  ")
	path := fs.PathJoin(dir, reportName(r.At)+".json")
	if err := writeSynced(fs, path, append(b, '\n')); err != nil {
		return err
	}
	log.Error("embedded: data loss accepted: the write-ahead log was cut at its damage",
		"log", r.Log, "cut_at", r.CutAt, "bytes_cut", r.BytesCut, "valid_records_cut", r.ValidRecordsCut,
		"lost_from", r.LostFrom, "lost_to", r.LostTo, "head", r.HeadAfter, "clean_shutdown_head", r.CleanHead,
		"report", path, "copy", r.Copy)
	return nil
}

// writeSynced writes a new file through a temporary name and syncs it, so
// it is either whole or absent.
func writeSynced(fs vfs.FS, path string, data []byte) error {
	tmp := path + ".tmp"
	w, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("embedded: create %s: %w", tmp, err)
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		fs.Remove(tmp)
		return fmt.Errorf("embedded: write %s: %w", tmp, err)
	}
	if err := w.Sync(); err != nil {
		w.Close()
		fs.Remove(tmp)
		return fmt.Errorf("embedded: sync %s: %w", tmp, err)
	}
	if err := w.Close(); err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("embedded: close %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, path); err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("embedded: rename %s: %w", tmp, err)
	}
	return nil
}
