package httpapi_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/httpapi"
)

// TestHealthOneRule: /healthz answers by one rule for every store and every
// condition (docs/decisions/0025-health-rule.md): 503 "failing" with the
// condition whenever the store cannot take appends — a full or read-only
// disk, a failed write, an unreachable server alike — and 200 "ok" while
// it can. The store's error (paths, hosts) stays out of the public body.
// The store is embedded nil: any call to it but WriteStatus (a request to
// its server) would panic, so /healthz asks the cached status only.
func TestHealthOneRule(t *testing.T) {
	st := &refusingStore{}
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Logger: slog.New(slog.DiscardHandler)}))
	defer srv.Close()
	for _, c := range []struct {
		cond      error
		restart   bool
		code      int
		status    string
		condition string
	}{
		{nil, false, http.StatusOK, "ok", ""},
		{events.ErrUnreachable, false, http.StatusServiceUnavailable, "failing", "unreachable"},
		{events.ErrNoSpace, false, http.StatusServiceUnavailable, "failing", "no_space"},
		{events.ErrReadOnly, false, http.StatusServiceUnavailable, "failing", "read_only"},
		{events.ErrWriteFailed, true, http.StatusServiceUnavailable, "failing", "write_failed"},
		{errors.Join(events.ErrUnwritable, errors.New("other")), false, http.StatusServiceUnavailable, "failing", "unwritable"},
		{nil, false, http.StatusOK, "ok", ""},
	} {
		st.set(c.cond, c.restart)
		a := call(t, srv, "GET", "/healthz", "")
		h := getHealth(t, a)
		if a.code != c.code || h.Status != c.status || h.Store.Condition != c.condition || h.Store.Writable != (c.cond == nil) ||
			h.Store.RestartNeeded != c.restart {
			t.Errorf("%v: %d %s, want %d %q condition %q", c.cond, a.code, a.body, c.code, c.status, c.condition)
		}
		if c.cond != nil && h.Store.Message == "" {
			t.Errorf("%v: no message: %s", c.cond, a.body)
		}
		if strings.Contains(a.body, "/srv/cronactor") {
			t.Errorf("%v: /healthz shows the store's error: %s", c.cond, a.body)
		}
	}
}
