package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cronactor/cronactor/actors/task/rules"
)

// ErrPayload matches every *PayloadError: a payload a typed handler
// (Typed) cannot decode, or one its type's Validate refuses.
var ErrPayload = errors.New("worker: bad payload")

// PayloadError is a payload a typed handler cannot run. Field names where
// it is wrong, as "payload" or "payload." and the JSON path of the field
// ("payload.retry.max"); Message says what is wrong.
type PayloadError struct {
	Field   string
	Message string
	// Err is the decoder's or Validate's error.
	Err error
}

func (e *PayloadError) Error() string { return "worker: " + e.Field + ": " + e.Message }

// Unwrap returns the decoder's or Validate's error.
func (e *PayloadError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrPayload) true.
func (e *PayloadError) Is(target error) bool { return target == ErrPayload }

// Validator is implemented by a payload type that checks itself; Typed
// calls it when a task is created or its payload updated, and before every
// run. It must be pure: no I/O, the same answer for the same value. An
// error that is a *rules.FieldError (scheduler.FieldError) names its
// field, e.g. "payload.url"; any other is reported for "payload".
type Validator interface {
	Validate() error
}

// Typed is a handler for runs whose payload is a JSON T: it decodes the
// payload (an absent one as JSON null, so T's zero value) and calls f with
// it. Fields the payload has and T has not are ignored.
//
// A payload it cannot decode, or one T's Validate (see Validator; a
// method of T or of *T) refuses, fails the run with a *PayloadError marked
// Permanent: no retry can mend it (R13). The handler is also a
// PayloadValidator, so the scheduler refuses such a payload when a task of
// its kind is created or its payload updated, with a *rules.FieldError
// naming the field ("payload.uid"), which the HTTP API answers with 400.
func Typed[T any](f func(ctx context.Context, run *Run, args T) (json.RawMessage, error)) Handler {
	return typed[T]{f: f}
}

type typed[T any] struct {
	f func(context.Context, *Run, T) (json.RawMessage, error)
}

// Handle implements Handler.
func (h typed[T]) Handle(ctx context.Context, run *Run) (json.RawMessage, error) {
	args, err := decodePayload[T](run.Payload)
	if err != nil {
		return nil, Permanent(err)
	}
	return h.f(ctx, run, args)
}

// ValidatePayload implements PayloadValidator.
func (h typed[T]) ValidatePayload(payload json.RawMessage) error {
	_, err := decodePayload[T](payload)
	var pe *PayloadError
	if errors.As(err, &pe) {
		return &rules.FieldError{Field: pe.Field, Message: pe.Message}
	}
	return err
}

// decodePayload decodes p into a T and validates it.
func decodePayload[T any](p json.RawMessage) (T, error) {
	var args T
	if len(p) == 0 {
		p = json.RawMessage("null")
	}
	if err := json.Unmarshal(p, &args); err != nil {
		return args, decodeError(err, args)
	}
	v, ok := any(&args).(Validator) // *T has T's methods too
	if !ok {
		return args, nil
	}
	if err := v.Validate(); err != nil {
		var fe *rules.FieldError
		if errors.As(err, &fe) {
			return args, &PayloadError{Field: fe.Field, Message: fe.Message, Err: err}
		}
		return args, &PayloadError{Field: "payload", Message: err.Error(), Err: err}
	}
	return args, nil
}

// decodeError names the field a decoding error is about.
func decodeError(err error, into any) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := "payload"
		if te.Field != "" {
			field += "." + te.Field
		}
		return &PayloadError{Field: field, Message: fmt.Sprintf("a JSON %s cannot be read as %s", te.Value, te.Type), Err: err}
	case errors.As(err, &se):
		return &PayloadError{Field: "payload", Message: fmt.Sprintf("not valid JSON (at byte %d): %s", se.Offset,
			strings.TrimPrefix(se.Error(), "json: ")), Err: err}
	}
	return &PayloadError{Field: "payload", Message: fmt.Sprintf("cannot be read as %T: %s", into,
		strings.TrimPrefix(err.Error(), "json: ")), Err: err}
}
