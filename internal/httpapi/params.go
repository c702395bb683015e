package httpapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
)

func parseDuration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, &fieldErr{field, fmt.Sprintf("must be a duration like \"90s\" or \"1m\", got %q", s)}
	}
	return d, nil
}

func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, &fieldErr{field, fmt.Sprintf("must be an RFC 3339 time like \"2026-01-02T15:04:05Z\", got %q", s)}
	}
	return t.UTC(), nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func derefTime(p *time.Time) time.Time {
	if p == nil {
		return time.Time{}
	}
	return *p
}

func pathID(r *http.Request) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return id, &fieldErr{"id", fmt.Sprintf("must be a task UUID, got %q", r.PathValue("id"))}
	}
	return id, nil
}
