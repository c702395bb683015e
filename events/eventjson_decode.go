package events

import (
	"bytes"
	"reflect"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// The bodies of the events every run appends (RunEnqueued, RunStarted,
// RunCompleted) are read here without reflection, as the fast path of
// Decode: recovery folds every event of the log, and encoding/json's
// reflection was most of its time. The fast path reads only the plain
// shape the encoder writes — one flat object, every key known and given
// once, strings without escapes, integers without exponents — and gives
// each value to the same method encoding/json would (time.Time and
// Duration's UnmarshalJSON, uuid.UUID's UnmarshalText), so it decodes
// what encoding/json decodes, to the same value. Anything else (a null, an
// escape, a nested value, an unknown or repeated key, a malformed body)
// goes to encoding/json, which decodes it or reports the error as before.

// fastDecoder is an event type whose JSON body can be read without
// encoding/json; ok false leaves the body to encoding/json.
type fastDecoder func(body []byte) (e Event, ok bool)

// fastDecoders are the event types read by the fast path, by Go type.
var fastDecoders = map[reflect.Type]fastDecoder{
	reflect.TypeFor[RunEnqueued]():  decodeRunEnqueued,
	reflect.TypeFor[RunStarted]():   decodeRunStarted,
	reflect.TypeFor[RunCompleted](): decodeRunCompleted,
	reflect.TypeFor[TaskCreated]():  decodeTaskCreated,
}

// flatValue is one member of a flat JSON object: its raw bytes, quotes
// included for a string.
type flatValue struct {
	key []byte
	raw []byte
	str bool // a string without escapes: raw is `"…"`
	obj bool // a flat object itself: raw is `{…}`
}

// scanFlat splits body, a JSON object of at most len(out) members whose
// values are strings without escapes, integers or flat objects of such
// values, into out. ok is false for anything else, including a key given
// twice.
func scanFlat(body []byte, out []flatValue) (n int, ok bool) {
	n, end, ok := scanObject(body, skipSpace(body, 0), out, true)
	return n, ok && skipSpace(body, end) == len(body)
}

// scanObject reads the object starting at body[i] into out: end is just
// past its closing brace. Objects among its values are allowed when nest
// is set, and only flat ones.
func scanObject(body []byte, i int, out []flatValue, nest bool) (n, end int, ok bool) {
	if i >= len(body) || body[i] != '{' {
		return 0, 0, false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return 0, i + 1, true
	}
	for {
		if n == len(out) {
			return 0, 0, false
		}
		k, ok := plainString(body, i)
		if !ok {
			return 0, 0, false
		}
		key := body[i+1 : k-1]
		for _, v := range out[:n] {
			if bytes.Equal(v.key, key) {
				return 0, 0, false // encoding/json takes the last; leave it to it
			}
		}
		i = skipSpace(body, k)
		if i >= len(body) || body[i] != ':' {
			return 0, 0, false
		}
		i = skipSpace(body, i+1)
		if i >= len(body) {
			return 0, 0, false
		}
		v := flatValue{key: key}
		var end int
		switch body[i] {
		case '"':
			v.str = true
			end, ok = plainString(body, i)
		case '{':
			if !nest {
				return 0, 0, false
			}
			var inner [8]flatValue
			v.obj = true
			_, end, ok = scanObject(body, i, inner[:], false)
		default:
			end, ok = plainInt(body, i)
		}
		if !ok {
			return 0, 0, false
		}
		v.raw = body[i:end]
		out[n] = v
		n++
		i = skipSpace(body, end)
		if i >= len(body) {
			return 0, 0, false
		}
		switch body[i] {
		case ',':
			i = skipSpace(body, i+1)
		case '}':
			return n, i + 1, true
		default:
			return 0, 0, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the string starting at b[i] (a quote): end is just
// past its closing quote. ok is false unless it is printable ASCII without
// a backslash.
func plainString(b []byte, i int) (end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return 0, false
		}
	}
	return 0, false
}

// plainInt reads the integer starting at b[i]: an optional minus, then 0
// or a digit 1–9 and more digits, at most 18 of them (no fraction, no
// exponent: those go to encoding/json).
func plainInt(b []byte, i int) (end int, ok bool) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	start := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	digits := j - start
	if digits == 0 || digits > 18 || (digits > 1 && b[start] == '0') {
		return 0, false
	}
	if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return 0, false
	}
	return j, true
}

// flat reads values into fields by key; every method returns false when
// the value is of the wrong kind or does not parse, and the caller then
// leaves the body to encoding/json.
func (v flatValue) int() (int, bool) {
	if v.str || v.obj {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v.raw), 10, 64)
	return int(n), err == nil
}

func (v flatValue) uuid() (uuid.UUID, bool) {
	var id uuid.UUID
	if !v.str || len(v.raw) != 38 { // only the canonical 36-character form
		return id, false
	}
	return id, id.UnmarshalText(v.raw[1:37]) == nil
}

func (v flatValue) time() (time.Time, bool) {
	var t time.Time
	if !v.str {
		return t, false
	}
	return t, t.UnmarshalJSON(v.raw) == nil
}

// duration parses the string as Duration's UnmarshalJSON does: a plain
// string (no escapes) unquotes to its bytes, so that is time.ParseDuration
// of them, without the detour through encoding/json.
func (v flatValue) duration() (Duration, bool) {
	if !v.str {
		return 0, false
	}
	d, err := time.ParseDuration(string(v.raw[1 : len(v.raw)-1]))
	return Duration(d), err == nil
}

func (v flatValue) string() (string, bool) {
	if !v.str {
		return "", false
	}
	return string(v.raw[1 : len(v.raw)-1]), true
}

func decodeRunEnqueued(body []byte) (Event, bool) {
	var vals [14]flatValue
	n, ok := scanFlat(body, vals[:])
	if !ok {
		return nil, false
	}
	var e RunEnqueued
	for _, v := range vals[:n] {
		switch string(v.key) {
		case "run_id":
			e.RunID, ok = v.uuid()
		case "run":
			e.Run, ok = v.int()
		case "due":
			e.Due, ok = v.time()
		case "next_run":
			e.NextRun, ok = v.time()
		case "missed":
			e.Missed, ok = v.int()
		case "priority":
			e.Priority, ok = v.int()
		case "slot":
			e.Slot, ok = v.time()
		case "spacing":
			e.Spacing, ok = v.duration()
		case "next_slot":
			var t time.Time
			t, ok = v.time()
			e.NextSlot = &t
		case "next_spacing":
			e.NextSpacing, ok = v.duration()
		case "reason":
			e.Reason, ok = v.string()
		case "attempt":
			e.Attempt, ok = v.int()
		case "retry_of":
			var id uuid.UUID
			id, ok = v.uuid()
			e.RetryOf = &id
		case "trigger":
			e.Trigger, ok = v.string()
		default:
			return nil, false
		}
		if !ok {
			return nil, false
		}
	}
	return e, true
}

func decodeRunStarted(body []byte) (Event, bool) {
	var vals [3]flatValue
	n, ok := scanFlat(body, vals[:])
	if !ok {
		return nil, false
	}
	var e RunStarted
	for _, v := range vals[:n] {
		switch string(v.key) {
		case "run_id":
			e.RunID, ok = v.uuid()
		case "run":
			e.Run, ok = v.int()
		case "deadline":
			e.Deadline, ok = v.time()
		default:
			return nil, false
		}
		if !ok {
			return nil, false
		}
	}
	return e, true
}

func decodeRunCompleted(body []byte) (Event, bool) {
	if bytes.Contains(body, []byte(`"checkpoint"`)) {
		return nil, false // a raw JSON value: encoding/json checks and keeps it
	}
	var vals [2]flatValue
	n, ok := scanFlat(body, vals[:])
	if !ok {
		return nil, false
	}
	var e RunCompleted
	for _, v := range vals[:n] {
		switch string(v.key) {
		case "run_id":
			e.RunID, ok = v.uuid()
		case "run":
			e.Run, ok = v.int()
		default:
			return nil, false
		}
		if !ok {
			return nil, false
		}
	}
	return e, true
}

func (v flatValue) timePtr() (*time.Time, bool) {
	t, ok := v.time()
	return &t, ok
}

// decodeTaskCreated reads a task created without a payload, a retry
// policy or a cron or at schedule (those go to encoding/json).
func decodeTaskCreated(body []byte) (Event, bool) {
	var vals [26]flatValue
	n, ok := scanFlat(body, vals[:])
	if !ok {
		return nil, false
	}
	var e TaskCreated
	for _, v := range vals[:n] {
		switch string(v.key) {
		case "task_id":
			e.TaskID, ok = v.uuid()
		case "name":
			e.Name, ok = v.string()
		case "owner":
			e.Owner, ok = v.string()
		case "kind":
			e.Kind, ok = v.string()
		case "schedule":
			e.Schedule, ok = v.schedule()
		case "start_at":
			e.StartAt, ok = v.timePtr()
		case "end_at":
			e.EndAt, ok = v.timePtr()
		case "max_runs":
			e.MaxRuns, ok = v.int()
		case "jitter":
			e.Jitter, ok = v.duration()
		case "tolerance":
			e.Tolerance, ok = v.duration()
		case "timebox":
			e.Timebox, ok = v.duration()
		case "priority":
			e.Priority, ok = v.int()
		case "next_run":
			e.NextRun, ok = v.time()
		case "next_slot":
			e.NextSlot, ok = v.timePtr()
		case "max_waiting":
			e.MaxWaiting, ok = v.int()
		case "queue":
			e.Queue, ok = v.string()
		case "missed_run_policy":
			e.MissedRunPolicy, ok = v.string()
		case "missed_after":
			e.MissedAfter, ok = v.duration()
		case "start_deadline":
			e.StartDeadline, ok = v.duration()
		case "heartbeat_timeout":
			e.HeartbeatTimeout, ok = v.duration()
		case "overlap":
			e.Overlap, ok = v.string()
		case "pause_after_failures":
			e.PauseAfterFailures, ok = v.int()
		case "history_retention":
			e.HistoryRetention, ok = v.duration()
		default:
			return nil, false
		}
		if !ok {
			return nil, false
		}
	}
	return e, true
}

// schedule reads an interval schedule, with its time zone and DST
// choices when given.
func (v flatValue) schedule() (Schedule, bool) {
	var sc Schedule
	if !v.obj {
		return sc, false
	}
	var vals [4]flatValue
	n, ok := scanFlat(v.raw, vals[:])
	if !ok {
		return sc, false
	}
	for _, f := range vals[:n] {
		switch string(f.key) {
		case "interval":
			sc.Interval, ok = f.duration()
		case "timezone":
			sc.Timezone, ok = f.string()
		case "dst_gap":
			sc.DSTGap, ok = f.string()
		case "dst_overlap":
			sc.DSTOverlap, ok = f.string()
		default:
			return sc, false
		}
		if !ok {
			return sc, false
		}
	}
	return sc, true
}
