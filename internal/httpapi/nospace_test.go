package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/httpapi"
)

// fullStore is the in-memory store whose appends fail as on a full disk
// while full is set.
type fullStore struct {
	*embedded.Store
	full atomic.Bool
}

func (s *fullStore) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	if s.full.Load() {
		return events.AppendResult{}, fmt.Errorf("%w: /data has 0 bytes free", events.ErrNoSpace)
	}
	return s.Store.Append(ctx, stream, exp, evs...)
}

// AppendAsync fails as Append does: without it, the embedded store's
// would be promoted and pass the task actors' appends by.
func (s *fullStore) AppendAsync(ctx context.Context, stream string, exp events.ExpectedVersion, evs []events.Proposed, done func(events.AppendResult, error)) {
	if s.full.Load() {
		done(events.AppendResult{}, fmt.Errorf("%w: /data has 0 bytes free", events.ErrNoSpace))
		return
	}
	s.Store.AppendAsync(ctx, stream, exp, evs, done)
}

// TestDiskFullIs507: a write refused for lack of space answers 507 with the
// JSON error shape and says so; reads still answer; once space is back the
// same write succeeds.
func TestDiskFullIs507(t *testing.T) {
	st := &fullStore{Store: memStore(t)}
	srv := rig{store: st, api: httpapi.Config{Logger: slog.New(slog.DiscardHandler)}}.serve(t)

	if a := call(t, srv, "POST", "/v1/tasks", `{"name":"a",`+strings.TrimPrefix(good, `"name":"poll",`)+`}`); a.code != http.StatusCreated && a.code != http.StatusOK {
		t.Fatalf("create before the disk filled: %d %s", a.code, a.body)
	}
	st.full.Store(true)
	a := call(t, srv, "POST", "/v1/tasks", `{`+good+`}`)
	if a.code != http.StatusInsufficientStorage {
		t.Fatalf("create on a full disk: %d %s, want 507", a.code, a.body)
	}
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &body); err != nil || !strings.Contains(body.Error.Message, "disk is full") {
		t.Fatalf("507 body: %s (%v)", a.body, err)
	}
	if strings.Contains(a.body, "/data") {
		t.Errorf("the answer shows a path: %s", a.body)
	}
	if r := call(t, srv, "GET", "/v1/tasks", ""); r.code != http.StatusOK {
		t.Fatalf("list on a full disk: %d %s", r.code, r.body)
	}
	st.full.Store(false)
	if a := call(t, srv, "POST", "/v1/tasks", `{`+good+`}`); a.code != http.StatusCreated && a.code != http.StatusOK {
		t.Fatalf("create once space is back: %d %s", a.code, a.body)
	}
}
