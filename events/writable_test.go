package events_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/cronactor/cronactor/events"
)

// TestConditions: each condition matches ErrUnwritable and only itself,
// wrapped or not, and Condition names it; other errors are no refusal.
func TestConditions(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("events: something else"), ""},
		{events.ErrVersionConflict, ""},
		{syscall.EROFS, ""}, // a backend wraps its errno in the condition
		{events.ErrNoSpace, "no_space"},
		{fmt.Errorf("%w: /data: %w", events.ErrNoSpace, syscall.ENOSPC), "no_space"},
		{fmt.Errorf("%w: /data: %w", events.ErrReadOnly, syscall.EROFS), "read_only"},
		{fmt.Errorf("append: %w", fmt.Errorf("%w: /data", events.ErrWriteFailed)), "write_failed"},
		{fmt.Errorf("%w: esdb://db:2113: connection refused", events.ErrUnreachable), "unreachable"},
		{fmt.Errorf("%w: a backend's own refusal", events.ErrUnwritable), "unwritable"},
	} {
		if got := events.Condition(tc.err); got != tc.want {
			t.Errorf("Condition(%v) = %q, want %q", tc.err, got, tc.want)
		}
		if got := (events.WriteStatus{Err: tc.err}).Condition(); got != tc.want {
			t.Errorf("WriteStatus{%v}.Condition() = %q, want %q", tc.err, got, tc.want)
		}
		if errors.Is(tc.err, events.ErrUnwritable) != (tc.want != "") {
			t.Errorf("errors.Is(%v, ErrUnwritable) = %v", tc.err, !(tc.want != ""))
		}
	}
	conds := []error{events.ErrNoSpace, events.ErrReadOnly, events.ErrWriteFailed, events.ErrUnreachable}
	for i, a := range conds {
		for j, b := range conds {
			if errors.Is(a, b) != (i == j) {
				t.Errorf("errors.Is(%v, %v) = %v", a, b, i != j)
			}
		}
	}
}
