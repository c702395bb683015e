package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cronactor/cronactor/actors/worker"
	"github.com/google/uuid"
)

// checkPayload asks the handler of kind, when it is a
// worker.PayloadValidator, whether it could run payload. A refusal is a
// *FieldError: the handler's own (e.g. "payload.url"), or one for
// "payload" carrying its message.
func (s *Scheduler) checkPayload(kind string, payload json.RawMessage) (err error) {
	v, ok := s.handlers[kind].(worker.PayloadValidator)
	if !ok {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = &FieldError{Field: "payload", Message: fmt.Sprintf("the %s handler's payload check panicked: %v", kind, p)}
		}
	}()
	if err := v.ValidatePayload(payload); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return fe
		}
		return &FieldError{Field: "payload", Message: err.Error()}
	}
	return nil
}

// checkUpdatePayload checks the payload an update sets against the kind of
// the task, and returns that kind for the update to require (a task
// deleted and created again with another kind meanwhile refuses it).
func (s *Scheduler) checkUpdatePayload(ctx context.Context, id uuid.UUID, u TaskUpdate) (string, error) {
	if u.Payload == nil {
		return "", nil
	}
	t, err := s.Task(ctx, id)
	if err != nil {
		return "", err
	}
	return t.Kind, s.checkPayload(t.Kind, u.Payload)
}
