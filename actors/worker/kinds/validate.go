package kinds

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
)

// ErrDisabled: a run of a kind the process was started without (see
// Disabled).
var ErrDisabled = errors.New("kinds: kind is disabled")

// CheckHTTPPayload is the http kind's payload check (its ValidatePayload):
// a JSON object with exactly the keys of HTTPPayload, whose "url" is an
// absolute http or https URL with a host. Errors are *rules.FieldError
// naming e.g. "payload.url".
func CheckHTTPPayload(p json.RawMessage) error {
	fields, err := payloadObject(p, `{"url": "https://…"}`, "url", "body")
	if err != nil {
		return err
	}
	raw, ok := fields["url"]
	if !ok {
		return fieldErr("payload.url", `is required: an http task's payload is {"url": "https://…", "body": …}`)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || string(raw) == "null" {
		return fieldErr("payload.url", "must be a string")
	}
	u, err := url.Parse(s)
	if err != nil {
		return fieldErr("payload.url", "must be a URL: "+strings.TrimPrefix(err.Error(), "parse "))
	}
	switch {
	case !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https"):
		return fieldErr("payload.url", fmt.Sprintf("must be an absolute http or https URL, got %q", s))
	case u.Host == "" || u.Hostname() == "":
		return fieldErr("payload.url", fmt.Sprintf("must name a host, got %q", s))
	}
	return nil
}

// CheckExecPayload is the exec kind's payload check (its ValidatePayload):
// a JSON object {"command": ["prog", "arg", …]} with a program name and no
// NUL in any argument (the system could not pass it).
func CheckExecPayload(p json.RawMessage) error {
	fields, err := payloadObject(p, `{"command": ["prog", "arg", …]}`, "command")
	if err != nil {
		return err
	}
	raw, ok := fields["command"]
	if !ok {
		return fieldErr("payload.command", `is required: an exec task's payload is {"command": ["prog", "arg", …]}`)
	}
	var cmd []string
	if err := json.Unmarshal(raw, &cmd); err != nil || cmd == nil {
		return fieldErr("payload.command", `must be a list of strings, the program and its arguments: ["prog", "arg", …]`)
	}
	if len(cmd) == 0 || cmd[0] == "" {
		return fieldErr("payload.command", "must name the program to run first")
	}
	for i, a := range cmd {
		if strings.IndexByte(a, 0) >= 0 {
			return fieldErr("payload.command["+strconv.Itoa(i)+"]", "must not contain a NUL character")
		}
	}
	return nil
}

// payloadObject reads a payload that must be a JSON object with only the
// keys given.
func payloadObject(p json.RawMessage, example string, keys ...string) (map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(p)) == 0 || string(bytes.TrimSpace(p)) == "null" {
		return nil, fieldErr("payload", "is required: "+example)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(p, &fields); err != nil {
		return nil, fieldErr("payload", "must be a JSON object: "+example)
	}
	var unknown []string
	for k := range fields {
		if !contains(keys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fieldErr("payload."+unknown[0], fmt.Sprintf("unknown field (the payload has %s)", strings.Join(keys, ", ")))
	}
	return fields, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func fieldErr(field, msg string) error { return &rules.FieldError{Field: field, Message: msg} }

// Disabled is a kind the process knows but will not run, e.g. exec in a
// daemon started without --allow-exec: creating a task of it is refused
// with reason as the "kind" field's error, and a run of a task recorded
// while it was enabled fails with ErrDisabled and reason, for good
// (worker.Permanent: no retry in this process would run it either).
func Disabled(reason string) worker.Handler {
	return worker.WithPayloadCheck(worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) {
		return nil, worker.Permanent(fmt.Errorf("%w: %s", ErrDisabled, reason))
	}), func(json.RawMessage) error { return fieldErr("kind", reason) })
}
