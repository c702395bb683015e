package worker

import "encoding/json"

// PayloadValidator is implemented by a Handler that can tell, before a
// task is recorded, whether a payload is one it can run. The scheduler
// calls ValidatePayload when a task of that kind is created and when an
// update replaces its payload; an error refuses the write and nothing is
// recorded. It must be pure: no I/O, the same answer for the same payload.
//
// An error that is a *rules.FieldError (scheduler.FieldError) names the
// field, e.g. "payload.url"; any other error is reported for "payload".
type PayloadValidator interface {
	ValidatePayload(payload json.RawMessage) error
}

// WithPayloadCheck returns h with check as its ValidatePayload.
func WithPayloadCheck(h Handler, check func(payload json.RawMessage) error) Handler {
	return checked{Handler: h, check: check}
}

type checked struct {
	Handler
	check func(json.RawMessage) error
}

func (c checked) ValidatePayload(p json.RawMessage) error { return c.check(p) }
