package kinds_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/google/uuid"
)

func run(payload string, checkpoint string, deadline time.Time) *worker.Run {
	r := worker.Run{TaskID: uuid.New(), RunID: uuid.New(), Number: 3, Payload: json.RawMessage(payload), Deadline: deadline}
	if checkpoint != "" {
		r.Checkpoint = json.RawMessage(checkpoint)
	}
	return worker.NewRun(r, nil)
}

func TestHTTPPostsTheRunAndKeepsTheCheckpoint(t *testing.T) {
	var got kinds.HTTPRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("decode: %v", err)
		}
		io.WriteString(w, `{"checkpoint":{"page":7}}`)
	}))
	defer srv.Close()
	dl := time.Now().Add(time.Minute)
	r := run(`{"url":"`+srv.URL+`","body":{"mailbox":"x"}}`, `{"page":6}`, dl)
	cp, err := kinds.HTTP(srv.Client()).Handle(context.Background(), r)
	if err != nil || string(cp) != `{"page":7}` {
		t.Fatalf("cp %s err %v", cp, err)
	}
	if got.Run != 3 || got.RunID != r.RunID.String() || string(got.Checkpoint) != `{"page":6}` || string(got.Payload) != `{"mailbox":"x"}` || !got.Deadline.Equal(dl.UTC()) {
		t.Fatalf("endpoint got %+v", got)
	}
}

func TestHTTPErrorStatusFailsWithExcerpt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(503)
		io.WriteString(w, "maintenance "+strings.Repeat("x", 2000))
	}))
	defer srv.Close()
	_, err := kinds.HTTP(nil).Handle(context.Background(), run(`{"url":"`+srv.URL+`"}`, "", time.Now().Add(time.Minute)))
	if !errors.Is(err, kinds.ErrHTTPStatus) || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "maintenance") || len(err.Error()) > 700 {
		t.Fatalf("err = %v", err)
	}
}

func TestHTTPStopsAtTheDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the deadline has come
	if _, err := kinds.HTTP(nil).Handle(ctx, run(`{"url":"`+srv.URL+`"}`, "", time.Now())); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestBadPayloads(t *testing.T) {
	for _, h := range []worker.Handler{kinds.HTTP(nil), kinds.Exec()} {
		if _, err := h.Handle(context.Background(), run(`{}`, "", time.Now())); !errors.Is(err, kinds.ErrBadPayload) {
			t.Fatalf("err = %v", err)
		}
	}
}

func TestExecRunsTheCommandWithTheRunInItsEnvironment(t *testing.T) {
	out := filepath.Join(t.TempDir(), "env")
	script := `echo "$CRONACTOR_RUN $CRONACTOR_CHECKPOINT" > ` + out + `; echo '{"checkpoint":{"n":2}}'`
	cp, err := kinds.Exec().Handle(context.Background(), run(`{"command":["sh","-c",`+jsonString(script)+`]}`, `{"n":1}`, time.Now().Add(time.Minute)))
	if err != nil || string(cp) != `{"n":2}` {
		t.Fatalf("cp %s err %v", cp, err)
	}
	b, _ := os.ReadFile(out)
	if strings.TrimSpace(string(b)) != `3 {"n":1}` {
		t.Fatalf("command saw %q", b)
	}
	_, err = kinds.Exec().Handle(context.Background(), run(`{"command":["sh","-c","echo broken >&2; exit 3"]}`, "", time.Now().Add(time.Minute)))
	if !errors.Is(err, kinds.ErrExit) || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("err = %v", err)
	}
}

func TestExecIsTerminatedAtTheDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := kinds.Exec().Handle(ctx, run(`{"command":["sh","-c","sleep 60 & wait"]}`, "", time.Now()))
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(kinds.ExecGrace + 10*time.Second):
		t.Fatal("the command's process group outlived its deadline")
	}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }
