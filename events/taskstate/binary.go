package taskstate

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// ErrBinary: bytes that UnmarshalBinary cannot read as a State.
var ErrBinary = errors.New("taskstate: bad binary state")

// binaryVersion is the first byte of the binary form; a change of the
// layout takes a new one, and the reader keeps reading the older ones:
// snapshot records written by an earlier build are read at the next start.
// Version 1 had no schedule exclusions; version 2 no overlap,
// pause_after_failures, failure count or pause reason; version 3 no
// history retention (Spec.HistoryRetention and the compaction fields,
// written last); version 4 no pending backfill (State.Backfill, written
// last); version 5 no trigger of a slot's first attempt (Run.Origin and
// PendingRetry.Origin, written last in each: read from version 5 as a
// first attempt's Trigger, and none for a retry). Since TaskCompacted
// events carry this form, every version stays readable.
const binaryVersion = 6

// The binary form is the compact copy of a State that a scheduler keeps
// for a task with no actor in memory (docs/architecture.md). It is not a
// storage format: it lives as long as the process, and the event log stays
// the one truth. Every field of State is in it, in declaration order:
// integers as varints (zigzag for the signed), durations as their
// nanoseconds, times as Unix seconds and nanoseconds (UTC, no monotonic
// reading; a zero time as one byte), strings and raw JSON length-prefixed,
// slices and pointers with their nil-ness kept. The round-trip test builds
// random states by reflection, so a field added to State and forgotten here
// fails it.

// MarshalBinary is AppendBinary to a new slice.
func (s *State) MarshalBinary() ([]byte, error) { return s.AppendBinary(make([]byte, 0, 128)) }

// AppendBinary appends the binary form of s to b (encoding.BinaryAppender).
func (s *State) AppendBinary(b []byte) ([]byte, error) {
	w := writer{b: append(b, binaryVersion)}
	w.id(s.ID)
	w.spec(&s.Spec)
	w.int(int64(s.Status))
	w.time(s.NextRun)
	w.time(s.NextSlot)
	w.int(int64(s.NextSpacing))
	w.int(int64(s.Scheduled))
	w.time(s.LastRun)
	w.int(int64(s.Runs))
	w.raw(s.Checkpoint)
	w.len(s.Open == nil, len(s.Open))
	for i := range s.Open {
		w.run(&s.Open[i])
	}
	w.int(int64(s.Incarnation))
	w.uint(s.Version)
	w.bool(s.Backlog)
	w.len(s.Retries == nil, len(s.Retries))
	for i := range s.Retries {
		r := &s.Retries[i]
		w.id(r.Of)
		w.int(int64(r.Run))
		w.int(int64(r.Attempt))
		w.time(r.Slot)
		w.int(int64(r.Spacing))
		w.time(r.At)
		w.str(r.Origin)
	}
	w.int(int64(s.Failures))
	w.str(s.PauseReason)
	w.time(s.CreatedAt)
	w.time(s.UpdatedAt)
	w.int(int64(s.Spec.HistoryRetention))
	w.uint(s.Compacted)
	w.time(s.CompactedAt)
	w.time(s.CompactedThrough)
	w.time(s.FirstAt)
	w.time(s.DeletedAt)
	w.str(s.DeleteReason)
	w.len(s.Backfill == nil, len(s.Backfill))
	for _, t := range s.Backfill {
		w.time(t)
	}
	return w.b, nil
}

// UnmarshalBinary sets s to the State data holds (as AppendBinary wrote
// it). It copies what it keeps: data may be reused afterwards.
func (s *State) UnmarshalBinary(data []byte) error {
	r := reader{b: data}
	if r.version = r.byte(); r.version < 1 || r.version > binaryVersion {
		if r.err != nil {
			return r.err
		}
		return fmt.Errorf("%w: version %d", ErrBinary, r.version)
	}
	var st State
	st.ID = r.id()
	r.spec(&st.Spec)
	st.Status = Status(r.int())
	st.NextRun = r.time()
	st.NextSlot = r.time()
	st.NextSpacing = time.Duration(r.int())
	st.Scheduled = int(r.int())
	st.LastRun = r.time()
	st.Runs = int(r.int())
	st.Checkpoint = r.raw()
	if n, ok := r.len(); ok {
		st.Open = make([]Run, n)
		for i := range st.Open {
			r.run(&st.Open[i])
		}
	}
	st.Incarnation = int(r.int())
	st.Version = r.uint()
	st.Backlog = r.bool()
	if n, ok := r.len(); ok {
		st.Retries = make([]PendingRetry, n)
		for i := range st.Retries {
			p := &st.Retries[i]
			p.Of = r.id()
			p.Run = int(r.int())
			p.Attempt = int(r.int())
			p.Slot = r.time()
			p.Spacing = time.Duration(r.int())
			p.At = r.time()
			if r.version >= 6 {
				p.Origin = r.str()
			}
		}
	}
	if r.version >= 3 {
		st.Failures = int(r.int())
		st.PauseReason = r.str()
	}
	st.CreatedAt = r.time()
	st.UpdatedAt = r.time()
	if r.version >= 4 {
		st.Spec.HistoryRetention = time.Duration(r.int())
		st.Compacted = r.uint()
		st.CompactedAt = r.time()
		st.CompactedThrough = r.time()
		st.FirstAt = r.time()
		st.DeletedAt = r.time()
		st.DeleteReason = r.str()
	}
	if r.version >= 5 {
		if n, ok := r.len(); ok {
			st.Backfill = make([]time.Time, n)
			for i := range st.Backfill {
				st.Backfill[i] = r.time()
			}
		}
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d bytes left over", ErrBinary, len(r.b))
	}
	*s = st
	return nil
}

type writer struct{ b []byte }

func (w *writer) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *writer) id(id uuid.UUID) {
	w.b = append(w.b, id[:]...)
}

func (w *writer) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

// len writes a slice's length, 0 for nil and n+1 otherwise.
func (w *writer) len(isNil bool, n int) {
	if isNil {
		w.uint(0)
		return
	}
	w.uint(uint64(n) + 1)
}

func (w *writer) str(s string) {
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *writer) raw(m json.RawMessage) {
	w.len(m == nil, len(m))
	w.b = append(w.b, m...)
}

// time writes 0 for the zero time, else the nanoseconds + 1 and the Unix
// seconds.
func (w *writer) time(t time.Time) {
	if t.IsZero() {
		w.uint(0)
		return
	}
	w.uint(uint64(t.Nanosecond()) + 1)
	w.int(t.Unix())
}

func (w *writer) timePtr(t *time.Time) {
	w.bool(t != nil)
	if t != nil {
		w.time(*t)
	}
}

func (w *writer) spec(s *Spec) {
	w.str(s.Name)
	w.str(s.Owner)
	w.str(s.Kind)
	w.raw(s.Payload)
	sc := &s.Schedule
	w.int(int64(sc.Interval))
	w.len(sc.Cron == nil, len(sc.Cron))
	for _, c := range sc.Cron {
		w.str(c)
	}
	w.len(sc.At == nil, len(sc.At))
	for _, t := range sc.At {
		w.time(t)
	}
	w.str(sc.Timezone)
	w.str(sc.DSTGap)
	w.str(sc.DSTOverlap)
	w.len(sc.Exclude == nil, len(sc.Exclude))
	for _, x := range sc.Exclude {
		w.str(x)
	}
	w.timePtr(s.Window.StartAt)
	w.timePtr(s.Window.EndAt)
	w.int(int64(s.Window.MaxRuns))
	w.int(int64(s.Window.Jitter))
	w.int(int64(s.Tolerance))
	w.int(int64(s.Timebox))
	w.int(int64(s.Priority))
	w.int(int64(s.MaxWaiting))
	p := &s.Policy
	w.str(p.Queue)
	w.bool(p.Retry != nil)
	if p.Retry != nil {
		w.int(int64(p.Retry.MaxAttempts))
		w.int(int64(p.Retry.InitialBackoff))
		w.int(int64(p.Retry.MaxBackoff))
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(p.Retry.Multiplier))
	}
	w.str(p.MissedRunPolicy)
	w.int(int64(p.MissedAfter))
	w.int(int64(p.StartDeadline))
	w.int(int64(p.HeartbeatTimeout))
	w.str(p.Overlap)
	w.int(int64(p.PauseAfterFailures))
	w.bool(s.ToleranceSet)
}

func (w *writer) run(r *Run) {
	w.id(r.ID)
	w.int(int64(r.Number))
	w.time(r.Due)
	w.time(r.EnqueuedAt)
	w.int(int64(r.Priority))
	w.int(int64(r.Incarnation))
	w.time(r.Slot)
	w.int(int64(r.Spacing))
	w.bool(r.Started)
	w.time(r.StartedAt)
	w.time(r.Deadline)
	w.raw(r.Checkpoint)
	w.int(int64(r.Attempt))
	w.id(r.RetryOf)
	w.str(r.Trigger)
	w.str(r.Origin)
}

// reader reads what writer wrote; the first error sticks and every later
// read returns a zero value.
type reader struct {
	b       []byte
	err     error
	version byte // of the form being read
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated or corrupt %s", ErrBinary, what)
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.fail("byte")
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bool() bool {
	switch r.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail("bool")
	return false
}

func (r *reader) id() uuid.UUID {
	var id uuid.UUID
	if len(r.b) < len(id) {
		r.fail("uuid")
		return id
	}
	copy(id[:], r.b)
	r.b = r.b[len(id):]
	return id
}

// len reads a slice's length; ok is false for a nil slice.
func (r *reader) len() (n int, ok bool) {
	v := r.uint()
	if v == 0 || r.err != nil {
		return 0, false
	}
	if v-1 > uint64(len(r.b)) { // every element takes at least a byte
		r.fail("length")
		return 0, false
	}
	return int(v - 1), true
}

func (r *reader) bytes(n int) []byte {
	if n > len(r.b) {
		r.fail("bytes")
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	v := r.uint()
	if v > uint64(len(r.b)) {
		r.fail("string")
		return ""
	}
	return string(r.bytes(int(v)))
}

func (r *reader) raw() json.RawMessage {
	n, ok := r.len()
	if !ok {
		return nil
	}
	return json.RawMessage(append([]byte{}, r.bytes(n)...))
}

func (r *reader) time() time.Time {
	ns := r.uint()
	if ns == 0 || r.err != nil {
		return time.Time{}
	}
	if ns > 1e9 {
		r.fail("time")
		return time.Time{}
	}
	return time.Unix(r.int(), int64(ns-1)).UTC()
}

func (r *reader) timePtr() *time.Time {
	if !r.bool() {
		return nil
	}
	t := r.time()
	return &t
}

func (r *reader) spec(s *Spec) {
	s.Name = r.str()
	s.Owner = r.str()
	s.Kind = r.str()
	s.Payload = r.raw()
	sc := &s.Schedule
	sc.Interval = events.Duration(r.int())
	if n, ok := r.len(); ok {
		sc.Cron = make([]string, n)
		for i := range sc.Cron {
			sc.Cron[i] = r.str()
		}
	}
	if n, ok := r.len(); ok {
		sc.At = make([]time.Time, n)
		for i := range sc.At {
			sc.At[i] = r.time()
		}
	}
	sc.Timezone = r.str()
	sc.DSTGap = r.str()
	sc.DSTOverlap = r.str()
	if r.version < 2 {
		// no exclusions in version 1
	} else if n, ok := r.len(); ok {
		sc.Exclude = make([]string, n)
		for i := range sc.Exclude {
			sc.Exclude[i] = r.str()
		}
	}
	s.Window.StartAt = r.timePtr()
	s.Window.EndAt = r.timePtr()
	s.Window.MaxRuns = int(r.int())
	s.Window.Jitter = events.Duration(r.int())
	s.Tolerance = time.Duration(r.int())
	s.Timebox = time.Duration(r.int())
	s.Priority = int(r.int())
	s.MaxWaiting = int(r.int())
	p := &s.Policy
	p.Queue = r.str()
	if r.bool() {
		p.Retry = &events.Retry{MaxAttempts: int(r.int()), InitialBackoff: events.Duration(r.int()),
			MaxBackoff: events.Duration(r.int())}
		if b := r.bytes(8); len(b) == 8 {
			p.Retry.Multiplier = math.Float64frombits(binary.LittleEndian.Uint64(b))
		}
	}
	p.MissedRunPolicy = r.str()
	p.MissedAfter = events.Duration(r.int())
	p.StartDeadline = events.Duration(r.int())
	p.HeartbeatTimeout = events.Duration(r.int())
	if r.version >= 3 {
		p.Overlap = r.str()
		p.PauseAfterFailures = int(r.int())
	}
	s.ToleranceSet = r.bool()
}

func (r *reader) run(x *Run) {
	x.ID = r.id()
	x.Number = int(r.int())
	x.Due = r.time()
	x.EnqueuedAt = r.time()
	x.Priority = int(r.int())
	x.Incarnation = int(r.int())
	x.Slot = r.time()
	x.Spacing = time.Duration(r.int())
	x.Started = r.bool()
	x.StartedAt = r.time()
	x.Deadline = r.time()
	x.Checkpoint = r.raw()
	x.Attempt = int(r.int())
	x.RetryOf = r.id()
	x.Trigger = r.str()
	if r.version >= 6 {
		x.Origin = r.str()
	} else if x.RetryOf == uuid.Nil {
		x.Origin = x.Trigger // a first attempt; a retry's is lost (counted, as by that build)
	}
}
