package embedded

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/record"
	"github.com/cockroachdb/pebble/vfs"
)

// ErrLogDamaged: the newest write-ahead log is damaged before its end, with
// valid records after the damage. Opening would replay the log up to the
// damage only and silently drop every acknowledged event logged after it. A
// *LogDamageError carrying it is also ErrCorrupt.
var ErrLogDamaged = errors.New("embedded: write-ahead log damaged before its end")

// LogDamageError says where the newest write-ahead log is damaged.
type LogDamageError struct {
	// File is the damaged log's path.
	File string
	// Offset is where the first record that fails its checks starts.
	Offset int64
	// NextValid is the offset of the first valid record after the damage.
	NextValid int64
	// ValidAfter counts the valid records found after the damage.
	ValidAfter int
	// Size is the log's size in bytes.
	Size int64
	// Reason is what the log reader reported at Offset.
	Reason error

	num uint32 // the log's number, which its chunks carry
}

func (e *LogDamageError) Error() string {
	return fmt.Sprintf("embedded: write-ahead log %s is damaged at offset %d (%v) and %d valid records follow the damage (the first at offset %d): "+
		"opening would silently drop every event logged after offset %d. Nothing was changed. "+
		"Restore the data directory from a backup; or, to keep the events before the damage and give up the ones after it, "+
		"open once with data loss accepted (cronactor serve --accept-data-loss; Options.AcceptDataLoss), "+
		"which keeps a copy of this log and writes what was cut to a DATA_LOSS report in the data directory",
		e.File, e.Offset, e.Reason, e.ValidAfter, e.NextValid, e.Offset)
}

// Is makes a LogDamageError match ErrLogDamaged and ErrCorrupt.
func (e *LogDamageError) Is(target error) bool {
	return target == ErrLogDamaged || target == ErrCorrupt
}

// Wire format of Pebble's log chunks (pebble/record, recyclable format, the
// only one Pebble's WAL writer emits): within 32 KiB blocks, each chunk is
// checksum:4 LE | length:2 LE | type:1 | log number:4 LE | payload, and the
// checksum is Pebble's masked CRC-32C of type, log number and payload.
const (
	walBlockSize       = 32 << 10
	walHeaderSize      = 11
	walFullChunk       = 5 // recyclable full chunk: a whole record
	walFirstChunk      = 6 // recyclable first chunk: a record's start
	walLastChunkType   = 8
	walChecksumMaskAdd = 0xa282ead8
)

var walName = regexp.MustCompile(`^(\d{6,})\.log$`)

// checkNewestWAL reads the newest write-ahead log in dbDir the way Pebble
// replays it and, where replay would stop before the end of the file, looks
// for valid records of the same log after that point. It returns nil when
// the log reads to its end, or stops at a torn tail (a last record cut short,
// zeroed preallocated space, or a recycled file's older content): Pebble
// tolerates those, and so does the store, because nothing after them was
// ever acknowledged. Damage followed by valid records is returned as a
// *LogDamageError. Pebble reads every older log strictly, so only the
// newest needs this check.
func checkNewestWAL(fs vfs.FS, dbDir string) (*LogDamageError, error) {
	names, err := fs.List(dbDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("embedded: list %s: %w", dbDir, err)
	}
	type wal struct {
		num  uint64
		name string
	}
	var wals []wal
	for _, n := range names {
		if m := walName.FindStringSubmatch(n); m != nil {
			num, err := strconv.ParseUint(m[1], 10, 64)
			if err == nil {
				wals = append(wals, wal{num, n})
			}
		}
	}
	if len(wals) == 0 {
		return nil, nil
	}
	sort.Slice(wals, func(i, j int) bool { return wals[i].num < wals[j].num })
	newest := wals[len(wals)-1]
	path := fs.PathJoin(dbDir, newest.name)
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("embedded: open %s: %w", path, err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("embedded: read %s: %w", path, err)
	}
	stop, reason := replayEnd(data, newest.num)
	first, count := validRecordsAfter(data, stop+1, uint32(newest.num))
	if count == 0 {
		return nil, nil
	}
	return &LogDamageError{File: path, Offset: stop, NextValid: first, ValidAfter: count, Size: int64(len(data)), Reason: reason, num: uint32(newest.num)}, nil
}

// replayEnd returns the offset of the record at which Pebble's replay of
// this log stops, and why (io.EOF when the reader saw a clean end).
func replayEnd(data []byte, num uint64) (int64, error) {
	rr := record.NewReader(bytes.NewReader(data), pebble.FileNum(num))
	for {
		off := rr.Offset()
		r, err := rr.Next()
		if err == nil {
			_, err = io.Copy(io.Discard, r)
		}
		if err != nil {
			return off, err
		}
	}
}

// validRecordsAfter counts the valid record starts (full or first chunks of
// log num, whole within their block and matching their checksum) at or after
// offset from, and returns the offset of the first. It looks at every byte
// offset, not only at block starts, so a record in the same block as the
// damage is found too.
func validRecordsAfter(data []byte, from int64, num uint32) (first int64, count int) {
	first = -1
	for o := from; o+walHeaderSize <= int64(len(data)); o++ {
		n, ok := validChunkAt(data, o, num)
		if !ok {
			continue
		}
		if typ := data[o+6]; typ == walFullChunk || typ == walFirstChunk {
			if count == 0 {
				first = o
			}
			count++
		}
		o += walHeaderSize + int64(n) - 1
	}
	return first, count
}

// validChunkAt reports whether a valid chunk of log num starts at offset o,
// and its payload length.
func validChunkAt(data []byte, o int64, num uint32) (int, bool) {
	blockEnd := (o/walBlockSize + 1) * walBlockSize
	if blockEnd > int64(len(data)) {
		blockEnd = int64(len(data))
	}
	if o+walHeaderSize > blockEnd {
		return 0, false
	}
	h := data[o : o+walHeaderSize]
	typ := h[6]
	if typ < walFullChunk || typ > walLastChunkType || binary.LittleEndian.Uint32(h[7:11]) != num {
		return 0, false
	}
	n := int64(binary.LittleEndian.Uint16(h[4:6]))
	if o+walHeaderSize+n > blockEnd {
		return 0, false
	}
	c := crc32.Checksum(data[o+6:o+walHeaderSize+n], crcTable)
	if (c>>15|c<<17)+walChecksumMaskAdd != binary.LittleEndian.Uint32(h[0:4]) {
		return 0, false
	}
	return int(n), true
}
