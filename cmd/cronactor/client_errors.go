package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// serverError is a refusal from the daemon, shown as one line:
// "FIELD: MESSAGE (hint)". It matches errServer.
type serverError struct {
	status  int
	field   string
	message string
	// id is the server's error ID of a 500 (its log has the detail).
	id   string
	hint string
}

func (e *serverError) Error() string {
	var b strings.Builder
	if e.field != "" {
		b.WriteString(e.field + ": ")
	}
	b.WriteString(e.message)
	if e.id != "" {
		b.WriteString(" (error id " + e.id + ")")
	}
	if e.hint != "" {
		b.WriteString(" (" + e.hint + ")")
	}
	return b.String()
}

// Is lets callers test for errServer.
func (e *serverError) Is(target error) bool { return target == errServer }

// newServerError reads an error answer: the API's {"error":{…}} body, or
// anything else (a proxy's page) as its status and first line.
func newServerError(status int, statusText string, body []byte) *serverError {
	e := &serverError{status: status}
	var a struct {
		Error struct {
			Field   string `json:"field"`
			Message string `json:"message"`
			ID      string `json:"id"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &a) == nil && a.Error.Message != "" {
		e.field, e.message, e.id = a.Error.Field, oneLine(a.Error.Message), a.Error.ID
	} else {
		e.message = statusText
		if first := oneLine(string(body)); first != "" {
			e.message += ": " + first
		}
	}
	switch {
	case status == http.StatusUnauthorized:
		e.hint = "give the daemon's token with --token or CRONACTOR_TOKEN"
	case status == http.StatusForbidden:
		e.hint = "check the token given with --token or CRONACTOR_TOKEN"
	case e.field == "id" && strings.HasPrefix(e.message, "must be a task UUID"),
		status == http.StatusNotFound && e.field == "id":
		e.hint = "task list shows IDs; --owner and --name name a task too"
	case status == http.StatusConflict && strings.Contains(e.message, "is paused"):
		e.hint = "resume it first with `cronactor task resume`"
	}
	return e
}

// oneLine is the first line of s, trimmed, at most 300 bytes.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return escapeControl(s)
}

// namedByFlag rewrites the field of a server refusal to the flag of fs the
// user typed for it ("retry.initial_backoff" → "--retry-initial-backoff",
// "first_run" → "--first-run"), when fs has that flag.
func namedByFlag(err error, fs *flagSet) error {
	se, ok := err.(*serverError)
	if !ok || se.field == "" {
		return err
	}
	name := strings.NewReplacer(".", "-", "_", "-").Replace(se.field)
	if fs.Lookup(name) != nil {
		cp := *se
		cp.field = "--" + name
		return &cp
	}
	return err
}

// describeTaskError adds to a refusal of a command on the task given by id
// the commands that help (the ID in the hint, so it can be run as is).
func describeTaskError(err error, id string) error {
	se, ok := err.(*serverError)
	if !ok || se.status != http.StatusConflict || !strings.Contains(se.message, "is paused") {
		return err
	}
	cp := *se
	cp.hint = fmt.Sprintf("resume it first with `cronactor task resume %s`", id)
	return &cp
}
