package crontasks

import (
	"encoding/binary"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Key prefixes of the view's database (see the package doc).
const (
	prefixMeta   = 'm'
	prefixTask   = 't'
	prefixOwner  = 'o'
	prefixStatus = 's'
	prefixDue    = 'd'
)

var (
	keyFormat     = []byte("m/format")
	keyCheckpoint = []byte("m/checkpoint")
)

// formatValue marks a view database; the number changes when the fold or
// the layout does, and an older view is then rebuilt.
const formatValue = formatName + "5"

const formatName = "cronactor-view "

// olderFormat reports whether marker is this view's marker of an older
// format number.
func olderFormat(marker string) bool {
	n, ok := strings.CutPrefix(marker, formatName)
	if !ok {
		return false
	}
	cur, _ := strconv.Atoi(strings.TrimPrefix(formatValue, formatName))
	v, err := strconv.Atoi(n)
	return err == nil && v >= 1 && v < cur
}

func taskKey(id uuid.UUID) []byte {
	return append([]byte{prefixTask, '/'}, id[:]...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func ownerPrefix(owner string) []byte {
	return appendString([]byte{prefixOwner, '/'}, owner)
}

// appendOrdered appends s so that encoded strings sort as the strings do:
// 0x00 is escaped as 0x00 0xFF and the end is marked by 0x00 0x01.
func appendOrdered(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b = append(b, s[i])
		if s[i] == 0 {
			b = append(b, 0xFF)
		}
	}
	return append(b, 0x00, 0x01)
}

// ownerNamePrefix is the part of an owner index key before the id; the
// keys of one owner sort by name.
func ownerNamePrefix(owner, name string) []byte {
	return appendOrdered(ownerPrefix(owner), name)
}

func ownerKey(owner, name string, id uuid.UUID) []byte {
	return append(ownerNamePrefix(owner, name), id[:]...)
}

func statusByte(s string) byte {
	switch s {
	case StatusActive:
		return 'a'
	case StatusPaused:
		return 'p'
	case StatusFinished:
		return 'f'
	default:
		return 'd'
	}
}

func statusPrefix(status string) []byte { return []byte{prefixStatus, '/', statusByte(status)} }

func statusKey(status string, id uuid.UUID) []byte { return append(statusPrefix(status), id[:]...) }

var duePrefix = []byte{prefixDue, '/'}

// dueTime orders times as unsigned bytes: nanoseconds with the sign bit
// flipped.
func dueTime(t time.Time) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano())^(1<<63))
}

func dueKey(t time.Time, id uuid.UUID) []byte {
	return append(append(append([]byte(nil), duePrefix...), dueTime(t)...), id[:]...)
}

// indexKeys are the index entries of a row.
func indexKeys(t *Task) [][]byte {
	keys := [][]byte{ownerKey(t.Owner, t.Name, t.ID), statusKey(t.Status, t.ID)}
	if t.Status == StatusActive && t.NextRun != nil {
		keys = append(keys, dueKey(*t.NextRun, t.ID))
	}
	return keys
}

// prefixEnd is the first key after every key with prefix p.
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
