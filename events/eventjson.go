package events

import (
	"strconv"
	"time"

	"github.com/google/uuid"
)

// The bodies of the events every run appends (RunEnqueued, RunStarted,
// RunCompleted) are written here without reflection, byte for byte what
// encoding/json writes for them: the golden streams under testdata and a
// test comparing both on random values hold that. What the fast path does
// not write itself — a checkpoint, a string or duration other than plain
// ASCII, a time RFC 3339 cannot show — it leaves to encoding/json, which
// then writes the whole body (or reports its error).

// fastJSON is an event whose JSON body can be written without
// encoding/json; ok false leaves the event to encoding/json. Each sizes its
// buffer for its usual body.
type fastJSON interface {
	fastJSON() (body []byte, ok bool)
}

func (e RunEnqueued) fastJSON() ([]byte, bool) {
	ok := true
	b := make([]byte, 0, 256)
	b = append(b, `{"run_id":`...)
	b = appendJSONUUID(b, e.RunID)
	b = append(b, `,"run":`...)
	b = strconv.AppendInt(b, int64(e.Run), 10)
	b = append(b, `,"due":`...)
	b, ok = appendJSONTime(b, e.Due, ok)
	b = append(b, `,"next_run":`...)
	b, ok = appendJSONTime(b, e.NextRun, ok)
	b = append(b, `,"missed":`...)
	b = strconv.AppendInt(b, int64(e.Missed), 10)
	b = append(b, `,"priority":`...)
	b = strconv.AppendInt(b, int64(e.Priority), 10)
	b = append(b, `,"slot":`...)
	b, ok = appendJSONTime(b, e.Slot, ok)
	if e.Spacing != 0 {
		b = append(b, `,"spacing":`...)
		b, ok = appendJSONString(b, e.Spacing.String(), ok)
	}
	if e.NextSlot != nil {
		b = append(b, `,"next_slot":`...)
		b, ok = appendJSONTime(b, *e.NextSlot, ok)
	}
	if e.NextSpacing != 0 {
		b = append(b, `,"next_spacing":`...)
		b, ok = appendJSONString(b, e.NextSpacing.String(), ok)
	}
	if e.Reason != "" {
		b = append(b, `,"reason":`...)
		b, ok = appendJSONString(b, e.Reason, ok)
	}
	if e.Attempt != 0 {
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(e.Attempt), 10)
	}
	if e.RetryOf != nil {
		b = append(b, `,"retry_of":`...)
		b = appendJSONUUID(b, *e.RetryOf)
	}
	if e.Trigger != "" {
		b = append(b, `,"trigger":`...)
		b, ok = appendJSONString(b, e.Trigger, ok)
	}
	return append(b, '}'), ok
}

func (e RunStarted) fastJSON() ([]byte, bool) {
	ok := true
	b := make([]byte, 0, 128)
	b = append(b, `{"run_id":`...)
	b = appendJSONUUID(b, e.RunID)
	b = append(b, `,"run":`...)
	b = strconv.AppendInt(b, int64(e.Run), 10)
	b = append(b, `,"deadline":`...)
	b, ok = appendJSONTime(b, e.Deadline, ok)
	return append(b, '}'), ok
}

func (e RunCompleted) fastJSON() ([]byte, bool) {
	if len(e.Checkpoint) > 0 {
		return nil, false // encoding/json checks and compacts it
	}
	b := make([]byte, 0, 80)
	b = append(b, `{"run_id":`...)
	b = appendJSONUUID(b, e.RunID)
	b = append(b, `,"run":`...)
	b = strconv.AppendInt(b, int64(e.Run), 10)
	return append(b, '}'), true
}

func appendJSONUUID(b []byte, id uuid.UUID) []byte {
	b = append(b, '"')
	b = AppendUUID(b, id)
	return append(b, '"')
}

// appendJSONTime appends t as time.Time's MarshalJSON does; ok becomes
// false where that would fail.
func appendJSONTime(b []byte, t time.Time, ok bool) ([]byte, bool) {
	b = append(b, '"')
	b2, err := t.AppendText(b)
	if err != nil {
		return b, false
	}
	return append(b2, '"'), ok
}

// appendJSONString appends s quoted when it is printable ASCII that
// encoding/json writes as it is (no quote, backslash or HTML character);
// ok becomes false for anything else.
func appendJSONString(b []byte, s string, ok bool) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return b, false
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), ok
}
