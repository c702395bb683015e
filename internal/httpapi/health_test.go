package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cronactor/cronactor/internal/httpapi"
)

// A store server that does not answer makes /healthz degraded (still 200:
// the daemon serves on), says so under store without the driver's error
// (it names hosts and users; /healthz is public), and ok once it answers.
func TestHealthReportsTheStoreServer(t *testing.T) {
	var down atomic.Bool
	check := func(context.Context) error {
		if down.Load() {
			return errors.New("postgres: server unavailable: dial tcp db.internal:5432: connection refused")
		}
		return nil
	}
	srv := httptest.NewServer(httpapi.New(httpapi.Config{StoreCheck: check, Logger: slog.New(slog.DiscardHandler)}))
	defer srv.Close()
	health := func() (int, string, string, string) {
		a := call(t, srv, "GET", "/healthz", "")
		var body struct {
			Status string `json:"status"`
			Store  struct {
				State   string `json:"state"`
				Message string `json:"message"`
			} `json:"store"`
		}
		if err := json.Unmarshal([]byte(a.body), &body); err != nil {
			t.Fatalf("%v: %s", err, a.body)
		}
		return a.code, body.Status, body.Store.State, a.body
	}
	if code, status, store, _ := health(); code != 200 || status != "ok" || store != "ok" {
		t.Fatalf("store up: %d %s %s", code, status, store)
	}
	down.Store(true)
	code, status, store, raw := health()
	if code != 200 || status != "degraded" || store != "unavailable" {
		t.Fatalf("store down: %d %s %s", code, status, store)
	}
	if strings.Contains(raw, "db.internal") {
		t.Fatalf("/healthz shows the driver's error: %s", raw)
	}
	down.Store(false)
	if code, status, store, _ := health(); code != 200 || status != "ok" || store != "ok" {
		t.Fatalf("store back: %d %s %s", code, status, store)
	}
}
