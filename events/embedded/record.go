package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"
	"unsafe"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Key layout (one Pebble keyspace):
//
//	g<position:8 BE>                 → record (the global log, in append order)
//	s<stream>\x00<version:8 BE>      → position:8 BE (a stream's index into the log)
//
// Both are written in one batch, so a stream entry never points at a
// missing record.
const (
	prefixGlobal = 'g'
	prefixStream = 's'
)

func globalKey(pos uint64) []byte { return appendGlobalKey(make([]byte, 0, 9), pos) }

func appendGlobalKey(k []byte, pos uint64) []byte {
	return binary.BigEndian.AppendUint64(append(k, prefixGlobal), pos)
}

func streamPrefix(stream string) []byte {
	k := make([]byte, 0, len(stream)+2)
	k = append(k, prefixStream)
	k = append(k, stream...)
	return append(k, 0)
}

func streamKey(stream string, version uint64) []byte {
	return appendStreamKey(make([]byte, 0, len(stream)+10), stream, version)
}

func appendStreamKey(k []byte, stream string, version uint64) []byte {
	k = append(k, prefixStream)
	k = append(k, stream...)
	return binary.BigEndian.AppendUint64(append(k, 0), version)
}

// recordFormat is the first byte of every record value.
const recordFormat = 1

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends r to b laid out as:
// format:1 | crc32c of the rest:4 | version uvarint | stream | id:16 | type |
// schema uvarint | at unix nanos varint | causation:16 | correlation:16 | data
// where strings and data are uvarint-length-prefixed.
func appendRecord(b []byte, r *events.Recorded) []byte {
	start := len(b)
	b = append(b, recordFormat, 0, 0, 0, 0)
	b = binary.AppendUvarint(b, r.Version)
	b = appendString(b, r.Stream)
	b = append(b, r.ID[:]...)
	b = appendString(b, r.Type)
	b = binary.AppendUvarint(b, uint64(r.Schema))
	b = binary.AppendVarint(b, r.At.UnixNano())
	b = append(b, r.CausationID[:]...)
	b = append(b, r.CorrelationID[:]...)
	b = appendBytes(b, r.Data)
	binary.BigEndian.PutUint32(b[start+1:start+5], crc32.Checksum(b[start+5:], crcTable))
	return b
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendString(b []byte, v string) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// errBadRecord is wrapped into ErrCorrupt by callers that know the position.
var errBadRecord = errors.New("bad record")

func decodeRecord(pos uint64, v []byte) (events.Recorded, error) {
	var r events.Recorded
	if len(v) < 5 || v[0] != recordFormat {
		return r, fmt.Errorf("%w: unknown record format", errBadRecord)
	}
	if crc32.Checksum(v[5:], crcTable) != binary.BigEndian.Uint32(v[1:5]) {
		return r, fmt.Errorf("%w: checksum mismatch", errBadRecord)
	}
	d := decoder{b: v[5:]}
	r.Version = d.uvarint()
	stream := d.bytes()
	r.ID = d.uuid()
	r.Type = typeName(d.bytes())
	r.Schema = int(d.uvarint())
	at := d.varint()
	r.CausationID = d.uuid()
	r.CorrelationID = d.uuid()
	data := d.bytes()
	if d.err != nil {
		return events.Recorded{}, d.err
	}
	if len(d.b) != 0 {
		return events.Recorded{}, fmt.Errorf("%w: %d trailing bytes", errBadRecord, len(d.b))
	}
	r.Stream, r.Data = streamAndData(stream, data)
	r.At = time.Unix(0, at).UTC()
	r.Position = events.Position{Commit: pos, Prepare: pos}
	return r, nil
}

// streamAndData copies a record's stream name and data out of Pebble's
// buffer into one allocation, not two: every event read (a subscriber's,
// a stream's) paid for both. The data comes last, its capacity its length,
// so an append to it by the caller reallocates rather than writes past it;
// the stream name is never written, so it can share the block. Data is nil
// when empty, as before. A reader that keeps only the stream name (as a
// map key, say) keeps the record's data alive with it: use strings.Clone
// where that matters.
func streamAndData(stream, data []byte) (string, []byte) {
	if len(stream)+len(data) == 0 {
		return "", nil
	}
	b := make([]byte, len(stream)+len(data))
	n := copy(b, stream)
	copy(b[n:], data)
	var d []byte
	if len(data) > 0 {
		d = b[n:len(b):len(b)]
	}
	if n == 0 {
		return "", d
	}
	return unsafe.String(&b[0], n), d
}

// typeNames holds the registered event type names, so that decoding a
// record of a known type allocates no string for its type.
var typeNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range events.Default.Types() {
		m[n] = n
	}
	return m
}()

func typeName(b []byte) string {
	if n, ok := typeNames[string(b)]; ok {
		return n
	}
	return string(b)
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated", errBadRecord)
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || uint64(len(d.b)) < n {
		d.fail()
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) uuid() uuid.UUID {
	var id uuid.UUID
	if len(d.b) < 16 {
		d.fail()
		return id
	}
	copy(id[:], d.b[:16])
	d.b = d.b[16:]
	return id
}
