package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cronactor/cronactor/actors/worker"
)

// A handler whose payload must name a mailbox refuses, when a task is
// created, a payload it could never run.
func ExampleWithPayloadCheck() {
	poll := worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) { return nil, nil })
	h := worker.WithPayloadCheck(poll, func(p json.RawMessage) error {
		var v struct {
			Mailbox string `json:"mailbox"`
		}
		if json.Unmarshal(p, &v) != nil || v.Mailbox == "" {
			return errors.New(`needs {"mailbox": "…"}`)
		}
		return nil
	})
	check := h.(worker.PayloadValidator)
	fmt.Println(check.ValidatePayload(json.RawMessage(`{"mailbox":"inbox"}`)))
	fmt.Println(check.ValidatePayload(json.RawMessage(`{}`)))
	// Output:
	// <nil>
	// needs {"mailbox": "…"}
}
